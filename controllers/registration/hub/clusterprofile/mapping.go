package clusterprofile

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

const (
	// ClusterManagerName is the spec.clusterManager.name and the
	// x-k8s.io/cluster-manager label of the profiles the hub writes.
	ClusterManagerName = "open-cluster-management"
	// ConditionJoined mirrors the cluster's ManagedClusterJoined condition.
	ConditionJoined = "Joined"
	// ReasonNotReported is the reason of a mirrored condition the
	// ManagedCluster does not (yet) report.
	ReasonNotReported = "ConditionNotReported"
	// AccessProviderName names the access provider holding the cluster's
	// endpoint from spec.managedClusterClientConfigs.
	AccessProviderName = "open-cluster-management"
)

// Labels returns the labels of the profile of a cluster exported through set.
func Labels(set string) map[string]string {
	return map[string]string{
		multiclusterv1alpha1.LabelClusterManagerKey: ClusterManagerName,
		multiclusterv1alpha1.LabelClusterSetKey:     set,
	}
}

// IsManaged reports whether the hub writes profile: its cluster manager
// label names open-cluster-management.
func IsManaged(profile *multiclusterv1alpha1.ClusterProfile) bool {
	return profile.Labels[multiclusterv1alpha1.LabelClusterManagerKey] == ClusterManagerName
}

// Spec returns the spec of cluster's profile.
func Spec(cluster *clusterv1.ManagedCluster) multiclusterv1alpha1.ClusterProfileSpec {
	return multiclusterv1alpha1.ClusterProfileSpec{
		DisplayName:    cluster.Name,
		ClusterManager: multiclusterv1alpha1.ClusterManager{Name: ClusterManagerName},
	}
}

// Tunnel is where consumers on the hub reach every cluster through the hub
// tunnel (pkg/hubtunnel): the hub's API server.
type Tunnel struct {
	// Server is the hub API server's URL.
	Server string
	// CAData is the PEM CA bundle of its serving certificate.
	CAData []byte
}

// TunnelFromConfig returns the tunnel endpoint of the hub that cfg reaches,
// as the hub controller reaches it (in a cluster: the kubernetes Service).
func TunnelFromConfig(cfg *rest.Config) (*Tunnel, error) {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the hub's CA for the ClusterProfiles' access providers: %w", err)
		}
		ca = data
	}
	return &Tunnel{Server: strings.TrimSuffix(cfg.Host, "/"), CAData: ca}, nil
}

// SetStatus writes what the hub knows of cluster into status: the
// Kubernetes version, the ClusterClaims as properties, the API server
// endpoint of the first client config and, with tunnel, the hub tunnel's
// endpoint of the cluster as access providers, and the ControlPlaneHealthy
// and Joined conditions mirrored from the cluster's Available and Joined
// conditions. Condition transition times are kept when the status of a
// condition does not change.
func SetStatus(status *multiclusterv1alpha1.ClusterProfileStatus, cluster *clusterv1.ManagedCluster, tunnel *Tunnel) {
	status.Version.Kubernetes = cluster.Status.Version.Kubernetes
	status.Properties = properties(cluster.Status.ClusterClaims)
	status.AccessProviders = accessProviders(cluster.Spec.ManagedClusterClientConfigs)
	if tunnel != nil {
		status.AccessProviders = append(status.AccessProviders, tunnelAccessProvider(cluster.Name, tunnel))
	}
	meta.SetStatusCondition(&status.Conditions, mirror(cluster, clusterv1.ManagedClusterConditionAvailable, multiclusterv1alpha1.ClusterConditionControlPlaneHealthy))
	meta.SetStatusCondition(&status.Conditions, mirror(cluster, clusterv1.ManagedClusterConditionJoined, ConditionJoined))
}

// mirror returns the condition of type to that copies the cluster's
// condition from, or Unknown when the cluster does not report it.
func mirror(cluster *clusterv1.ManagedCluster, from, to string) metav1.Condition {
	c := meta.FindStatusCondition(cluster.Status.Conditions, from)
	if c == nil {
		return metav1.Condition{
			Type: to, Status: metav1.ConditionUnknown, Reason: ReasonNotReported,
			Message: fmt.Sprintf("ManagedCluster %s does not report %s", cluster.Name, from),
		}
	}
	out := metav1.Condition{Type: to, Status: c.Status, Reason: c.Reason, Message: c.Message}
	if out.Reason == "" {
		out.Reason = from + string(c.Status)
	}
	return out
}

// properties returns the claims with a name and a value, the first of each
// name, as properties.
func properties(claims []clusterv1.ManagedClusterClaim) []multiclusterv1alpha1.Property {
	var out []multiclusterv1alpha1.Property
	seen := map[string]bool{}
	for _, c := range claims {
		if c.Name == "" || c.Value == "" || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		out = append(out, multiclusterv1alpha1.Property{Name: c.Name, Value: c.Value})
	}
	return out
}

// tunnelAccessProvider returns the access provider of KEP-5339 through
// which a consumer on the hub reaches cluster with its own hub identity: the
// hub tunnel's endpoint of the cluster, the hub's CA, and the cluster's name
// for the exec plugin (kubectl-ocm credentials) that the consumer's provider
// file names for hubtunnel.AccessProviderName.
func tunnelAccessProvider(cluster string, tunnel *Tunnel) multiclusterv1alpha1.AccessProvider {
	config, _ := json.Marshal(hubtunnel.ExecConfig{ClusterName: cluster})
	return multiclusterv1alpha1.AccessProvider{
		Name: hubtunnel.AccessProviderName,
		Cluster: multiclusterv1alpha1.Cluster{
			Server:                   tunnel.Server + hubtunnel.ProxyPath(cluster),
			CertificateAuthorityData: tunnel.CAData,
			Extensions: []multiclusterv1alpha1.NamedExtension{{
				Name: hubtunnel.ExecExtensionName, Extension: runtime.RawExtension{Raw: config},
			}},
		},
	}
}

// accessProviders returns the endpoint and CA of the first client config
// with a URL, the one the hub reaches the cluster's API server by.
func accessProviders(configs []clusterv1.ClientConfig) []multiclusterv1alpha1.AccessProvider {
	for _, c := range configs {
		if c.URL == "" {
			continue
		}
		return []multiclusterv1alpha1.AccessProvider{{
			Name:    AccessProviderName,
			Cluster: multiclusterv1alpha1.Cluster{Server: c.URL, CertificateAuthorityData: c.CABundle},
		}}
	}
	return nil
}
