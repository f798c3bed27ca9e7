package config

import (
	"cmp"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
)

// HubValues parameterise the hub manifests in config/hub.
type HubValues struct {
	// Image is the ocm-controller image of the hub controller.
	Image string
	// HubNamespace is where the hub controller runs.
	HubNamespace string
	// OperatorNamespace is where the bootstrap ServiceAccount lives.
	OperatorNamespace string
	// ClusterManagerName is the ClusterManager the hub controller reports on
	// and reads autoApproveUsers from. Default: cluster-manager.
	ClusterManagerName string
	// FeatureGates is the hub controller's --feature-gates value
	// (featuregate.Set.Flag); empty renders no flag.
	FeatureGates string
	// ConversionWebhookURL, when set, is where the API server reaches the
	// hub controller's conversion webhook (https://<host>:<port>/convert),
	// instead of through the Service in front of it: for hubs whose API
	// server cannot reach Services, such as the local test environment. The
	// controller then listens on that port (on that host when it is a
	// loopback address) and its serving certificate names that host.
	ConversionWebhookURL string
	// NetworkPolicy, when set, renders the NetworkPolicies of the hub
	// controller's Pod (the ClusterManager's
	// spec.networkPolicyConfiguration): ingress to its webhook port, from
	// APIServerNamespace when set, and to its metrics port from
	// MonitoringNamespace, only when set. Nil renders none.
	NetworkPolicy *operatorv1.NetworkPolicyConfiguration
	// LeaderElection is the hub controller's leader election timings (the
	// ClusterManager's spec.leaderElection).
	LeaderElection
	// Scheduling places the hub controller's and the hub tunnel's Pods and
	// sizes their containers.
	Scheduling
	// TLSValues is the TLS profile the operator passes to the hub
	// controller.
	TLSValues
	// Importer, when set, renders the cluster importer (feature gate
	// ClusterImporter): its ServiceAccount, bindings, admission policy and
	// Deployment.
	Importer *ImporterValues
}

// ImporterValues configure the cluster importer, beyond what it shares with
// the hub controller (image, scheduling, leader election).
type ImporterValues struct {
	// Renderers are the importer's --import-renderers, in order: what the
	// Klusterlet it installs is rendered from (ImportRendererAuto,
	// ImportRendererFromConfigSecret); empty is ImportRendererAuto alone.
	Renderers []string
}

// HubMetricsPort is the port of the hub controller's Prometheus /metrics
// endpoint: its container port and --metrics-bind-address, and the port its
// NetworkPolicy opens to the monitoring namespace.
const HubMetricsPort = 8080

// MetricsPort is HubMetricsPort, for the templates.
func (HubValues) MetricsPort() int { return HubMetricsPort }

// TunnelPort is the hub tunnel's container port, for the templates.
func (HubValues) TunnelPort() int { return hubtunnel.Port }

// BootstrapServiceAccount names the shared bootstrap ServiceAccount.
func (HubValues) BootstrapServiceAccount() string { return identity.BootstrapServiceAccount }

// AgentTokenNamespace is the hub namespace of the token driver's agent
// identities, which only the hub controller administers.
func (HubValues) AgentTokenNamespace() string { return identity.AgentTokenNamespace }

// CAPIAnnotation names the Cluster API Cluster a ManagedCluster is imported
// from (importer.CAPIAnnotation).
func (HubValues) CAPIAnnotation() string { return importer.CAPIAnnotation }

// ClusterRBACPrefix starts the names of the per-cluster RBAC the hub
// controller writes (identity.ClusterRBACPrefix).
func (HubValues) ClusterRBACPrefix() string { return identity.ClusterRBACPrefix }

// ManagedClustersGroup is the group of every agent certificate
// (identity.ManagedClustersGroup).
func (HubValues) ManagedClustersGroup() string { return identity.ManagedClustersGroup }

// AgentTokenGroup is the group of the token driver's agent identities
// (identity.AgentTokenGroup).
func (HubValues) AgentTokenGroup() string { return identity.AgentTokenGroup }

// ObjectAgentCEL holds when the request comes from the agent of the cluster
// whose ManagedCluster it writes (identity.IsAgentOf).
func (HubValues) ObjectAgentCEL() string { return identity.AgentOfCEL("object.metadata.name") }

// AgentSubjectCEL holds for an RBAC subject s that names an identity issued
// to managed clusters (identity.IsAgentSubject).
func (HubValues) AgentSubjectCEL() string { return identity.AgentSubjectCEL }

// AdoptedAnnotation marks a namespace the importer adopted as a cluster's
// (clusternamespace.AdoptedAnnotation).
func (HubValues) AdoptedAnnotation() string { return clusternamespace.AdoptedAnnotation }

// PreparedAnnotation marks a namespace prepared for a cluster of a name
// (clusternamespace.PreparedAnnotation).
func (HubValues) PreparedAnnotation() string { return clusternamespace.PreparedAnnotation }

// ClusterNameLabel labels a cluster's namespace with its name.
func (HubValues) ClusterNameLabel() string { return clusterv1.ClusterNameLabelKey }

// NamespaceAgentCEL holds when the request comes from the agent of the
// cluster whose namespace it is in (identity.IsAgentOf).
func (HubValues) NamespaceAgentCEL() string { return identity.AgentOfCEL("request.namespace") }

// LeaseName is the name of a cluster's lease in its namespace.
func (HubValues) LeaseName() string { return clusterv1.LeaseName }

// ClusterIdentityCEL is the admission policies' rule for "an identity the
// hub issued to a managed cluster" (identity.IsClusterIdentity).
func (HubValues) ClusterIdentityCEL() string { return identity.ClusterIdentityCEL }

// BootstrapIdentityCEL is the admission policies' rule for "a bootstrap
// identity" (identity.IsBootstrapIdentity).
func (HubValues) BootstrapIdentityCEL() string { return identity.BootstrapIdentityCEL }

// RegistrantAnnotationsCEL holds when every annotation of the admitted
// object is one a registrant may set (identity.RegistrantMayAnnotate).
func (HubValues) RegistrantAnnotationsCEL() string { return identity.RegistrantAnnotationsCEL }

// RegistrantAnnotationPrefix starts the annotations a registrant may set.
func (HubValues) RegistrantAnnotationPrefix() string { return identity.RegistrantAnnotationPrefix }

// BootstrapTokenGroup is the group of the bootstrap tokens bound to the
// bootstrap role.
func (HubValues) BootstrapTokenGroup() string { return identity.BootstrapTokenGroup }

// ClusterBootstrapNamespace holds the cluster-bound bootstrap
// ServiceAccounts.
func (HubValues) ClusterBootstrapNamespace() string { return identity.ClusterBootstrapNamespace }

// ClusterBootstrapGroup is the group of every ServiceAccount of
// ClusterBootstrapNamespace, bound once to the bootstrap role.
func (HubValues) ClusterBootstrapGroup() string { return identity.ClusterBootstrapGroup }

// ClusterBootstrapNamespaceUserPrefix starts the user name of every
// ServiceAccount of ClusterBootstrapNamespace, which the admission policy
// cluster-bootstrap.open-cluster-management.io matches.
func (HubValues) ClusterBootstrapNamespaceUserPrefix() string {
	return identity.ClusterBootstrapNamespaceUserPrefix
}

// ClusterBootstrapUserPrefix starts the user names of the cluster-bound
// bootstrap ServiceAccounts, which the admission policies restrict.
func (HubValues) ClusterBootstrapUserPrefix() string { return identity.ClusterBootstrapUserPrefix }

// ClusterBootstrapServiceAccountPrefix starts the names of the
// cluster-bound bootstrap ServiceAccounts, the only ones the importer may
// issue tokens of.
func (HubValues) ClusterBootstrapServiceAccountPrefix() string {
	return identity.ClusterBootstrapServiceAccountPrefix
}

// StandbyHub is the bootstrap kubeconfig of a standby hub, in its own
// Secret of the agent's namespace.
type StandbyHub struct {
	// Secret names the Secret (StandbySecretName).
	Secret string
	// Kubeconfig is the bootstrap kubeconfig.
	Kubeconfig []byte
}

// StandbySecretName names the bootstrap kubeconfig Secret of the n-th hub
// (n from 2) that `kubectl ocm join` writes: bootstrap-hub-kubeconfig-<n>.
func StandbySecretName(n int) string {
	return fmt.Sprintf("%s-%d", operatorv1.BootstrapHubKubeConfigSecret, n)
}

// ClusterBootstrapValues parameterise the manifests in
// config/cluster-bootstrap: the bootstrap identity bound to one cluster.
type ClusterBootstrapValues struct {
	// ClusterName is the cluster the identity may register.
	ClusterName string
}

// ServiceAccount names the cluster-bound bootstrap ServiceAccount.
func (v ClusterBootstrapValues) ServiceAccount() string {
	return identity.ClusterBootstrapServiceAccount(v.ClusterName)
}

// Namespace is where the bootstrap ServiceAccounts live.
func (ClusterBootstrapValues) Namespace() string { return identity.ClusterBootstrapNamespace }

// AgentValues parameterise the managed-cluster manifests in config/agent.
// The fields that hold a setting of the Klusterlet render into the
// Klusterlet (config/agent/30-klusterlet.yaml); the agent takes the
// Klusterlet's settings as flags from KlusterletFlags.
type AgentValues struct {
	// ClusterName is the managed cluster's name on the hub.
	ClusterName string
	// Image is the ocm-controller image of the agent.
	Image string
	// AgentNamespace is where the agent runs.
	AgentNamespace string
	// HubAPIServer is the hub's API server URL.
	HubAPIServer string
	// BootstrapKubeconfig is the kubeconfig the agent first joins with.
	BootstrapKubeconfig []byte
	// Mode is the Klusterlet's spec.deployOption.mode: Default or Singleton.
	// Default: Default.
	Mode string
	// ExternalServerURLs are the managed cluster's API server URLs the hub
	// may use (the Klusterlet's spec.externalServerURLs).
	ExternalServerURLs []string
	// ClientCertExpirationSeconds is the requested lifetime of the agent's
	// client certificates; 0 leaves it to the hub's signer.
	ClientCertExpirationSeconds int32
	// RegistrationAuth is how the agent authenticates to the hub, its
	// --registration-auth (the Klusterlet's
	// spec.registrationConfiguration.registrationDriver.authType): token;
	// empty leaves the default, csr.
	RegistrationAuth string
	// AddonKubeClientRegistrationAuth is how add-on agents obtain their hub
	// credential for the hub's API server: csr or token (the Klusterlet's
	// spec.registrationConfiguration.addOnKubeClientRegistrationDriver.authType
	// and the agent's --addon-kubeclient-registration-auth); empty leaves
	// the agent's default, csr.
	AddonKubeClientRegistrationAuth string
	// AddonTokenExpirationSeconds is the requested lifetime of add-on
	// tokens with the token driver; 0 leaves the agent's default, a year.
	AddonTokenExpirationSeconds int64
	// KlusterletName names the Klusterlet; Hosted mode only, where it is
	// HostedKlusterletName(ClusterName) by default.
	KlusterletName string
	// ManagedKubeconfig is the managed cluster's kubeconfig, with embedded
	// credentials; Hosted mode only.
	ManagedKubeconfig []byte
	// ReportHostingCluster has the agent report the cluster it runs on (the
	// Klusterlet's spec.deployOption.reportHostingCluster: Enable).
	ReportHostingCluster bool
	// ManagementClusterName is the hub's name for the hosting cluster (the
	// Klusterlet's spec.deployOption.hosted.managementClusterName); Hosted
	// mode only.
	ManagementClusterName string
	// HubKubeAPIQPS and HubKubeAPIBurst limit the work agent's requests to
	// the hub (the Klusterlet's spec.workConfiguration, which the agent
	// reads at start); 0 leaves the agent's defaults, 50 and 100.
	HubKubeAPIQPS   int32
	HubKubeAPIBurst int32
	// ManifestWorkWorkers and AppliedWorkWorkers are the work agent's
	// --manifestwork-agent-workers and
	// --appliedmanifestwork-finalize-controller-workers (the Klusterlet's
	// spec.workConfiguration.workers); 0 leaves the agent's defaults.
	ManifestWorkWorkers int32
	AppliedWorkWorkers  int32
	// FeatureGates are the agent's feature gates (featuregate.Set.Flag),
	// which decide the RBAC it gets (HubTunnel); empty leaves every feature
	// at its default. The agent's --feature-gates is in KlusterletFlags.
	FeatureGates string
	// KlusterletFlags are the agent's flags that carry the Klusterlet's
	// settings (agentFlags), which AgentValuesFromKlusterlet reads; when
	// nil, they are read from the Klusterlet these values render.
	KlusterletFlags []string
	// HubConnectionTimeoutSeconds is how long the agent tolerates losing
	// its hub before it moves to the next one, with two or more bootstrap
	// kubeconfigs (the agent's --hub-connection-timeout); 0 leaves the
	// agent's default.
	HubConnectionTimeoutSeconds int32
	// StandbyHubs are the bootstrap kubeconfigs of standby hubs that
	// `kubectl ocm join` writes next to bootstrap-hub-kubeconfig, listed
	// after it in the Klusterlet's bootstrapKubeConfigs.
	StandbyHubs []StandbyHub
	// PriorityClassName is the agent Pod's priority class.
	PriorityClassName string
	// HostAliases are entries of the agent Pod's hosts file, such as the
	// hub API server's address.
	HostAliases []corev1.HostAlias
	// TLSProfile is the Klusterlet's spec.tlsProfile, which `kubectl ocm
	// join` sets.
	TLSProfile *operatorv1.TLSProfile
	// NetworkPolicy, when set, renders the NetworkPolicies of the agent's
	// namespace (the Klusterlet's spec.networkPolicyConfiguration): every
	// Pod there denied all traffic, the agent allowed egress to DNS and
	// NetworkPolicy.Egress and ingress to its metrics port from
	// MonitoringNamespace, only when set. Nil renders none.
	NetworkPolicy *AgentNetworkPolicy
	// LeaderElection is the agent's leader election timings (the
	// Klusterlet's spec.leaderElection).
	LeaderElection
	// Scheduling places the agent's Pod and sizes its container.
	Scheduling
	// TLSValues is the TLS profile the operator passes to the agent.
	TLSValues
}

// Namespace is the hub controller's own namespace, HubNamespace. The roles
// generated from RBAC markers name it as {{ .Namespace }}.
func (v HubValues) Namespace() string { return v.HubNamespace }

// Namespace is the agent's own namespace, AgentNamespace. The roles
// generated from RBAC markers name it as {{ .Namespace }}.
func (v AgentValues) Namespace() string { return v.AgentNamespace }

// Hosted reports whether the agent runs on a hosting cluster, away from its
// managed cluster (Mode Hosted or SingletonHosted): the templates of
// config/agent render their Hosted form then.
func (v AgentValues) Hosted() bool { return operatorv1.InstallMode(v.Mode).IsHosted() }

// HubTunnel reports whether the agent runs the hub tunnel, which its
// FeatureGates decide (featuregate.HubTunnel); a flag that does not parse
// leaves the tunnel's RBAC out (the agent refuses such a flag at start).
func (v AgentValues) HubTunnel() bool {
	gates, err := featuregate.Parse(featuregate.Agent, v.FeatureGates)
	return err == nil && gates.Enabled(featuregate.HubTunnel)
}

// withDefaults fills empty fields.
func (v HubValues) withDefaults() HubValues {
	v.Image = cmp.Or(v.Image, DefaultImage())
	v.HubNamespace = cmp.Or(v.HubNamespace, HubNamespace)
	v.OperatorNamespace = cmp.Or(v.OperatorNamespace, OperatorNamespace)
	v.ClusterManagerName = cmp.Or(v.ClusterManagerName, operatorv1.ClusterManagerName)
	return v
}

// withDefaults fills empty fields.
func (v AgentValues) withDefaults() AgentValues {
	v.Image = cmp.Or(v.Image, DefaultImage())
	v.AgentNamespace = cmp.Or(v.AgentNamespace, AgentNamespace)
	v.Mode = cmp.Or(v.Mode, "Default")
	return v
}

// withHostedDefaults fills empty fields for Hosted mode.
func (v AgentValues) withHostedDefaults() AgentValues {
	v.Image = cmp.Or(v.Image, DefaultImage())
	v.KlusterletName = cmp.Or(v.KlusterletName, HostedKlusterletName(v.ClusterName))
	v.AgentNamespace = cmp.Or(v.AgentNamespace, v.KlusterletName)
	v.Mode = cmp.Or(v.Mode, "Hosted")
	return v
}
