package config

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

//go:embed hub/*.yaml hub-operator/*.yaml agent/*.yaml agent-hosted/*.yaml cluster-bootstrap/*.yaml klusterlet-operator/*.yaml
var manifestFiles embed.FS

// Default namespaces and names, as OCM has them.
const (
	// HubNamespace holds the hub controller.
	HubNamespace = "open-cluster-management-hub"
	// OperatorNamespace holds the bootstrap ServiceAccounts on the hub.
	OperatorNamespace = identity.BootstrapNamespace
	// AgentNamespace holds the agent and its secrets on a managed cluster.
	AgentNamespace = "open-cluster-management-agent"
	// DefaultImageRegistry is the registry and organization the
	// ocm-controller image is pulled from by default.
	DefaultImageRegistry = "quay.io/kubectl-ocm"
	// ControllerImageName is the repository name of the ocm-controller
	// image within its registry.
	ControllerImageName = "ocm-controller"
	// ManagedKubeconfigSecret is the Secret (key kubeconfig) holding the
	// managed cluster's kubeconfig next to a hosted agent (OCM's name).
	ManagedKubeconfigSecret = "external-managed-kubeconfig"
)

// ControllerImage returns the ocm-controller image of version ver in
// registry: <registry>/ocm-controller:<tag>, the tag being
// version.ImageTag(ver), never latest.
func ControllerImage(registry, ver string) string {
	return strings.TrimSuffix(registry, "/") + "/" + ControllerImageName + ":" + version.ImageTag(ver)
}

// DefaultImage is the ocm-controller image the manifests run when no image is
// given: the image of this build's version in DefaultImageRegistry.
func DefaultImage() string { return ControllerImage(DefaultImageRegistry, version.Version) }

// HostedKlusterletName is the name of the Klusterlet of a managed cluster
// whose agent runs on a hosting cluster (Hosted mode): klusterlet-<cluster>.
// As in OCM, it is also the agent's namespace on the hosting cluster.
func HostedKlusterletName(cluster string) string { return "klusterlet-" + cluster }

// HostedAgentDeployment names the Deployment of a hosted agent.
func HostedAgentDeployment(cluster string) string { return HostedKlusterletName(cluster) + "-agent" }

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
	// Scheduling places the hub controller's Pod and sizes its container.
	Scheduling
}

// HubMetricsPort is the port of the hub controller's Prometheus /metrics
// endpoint: its container port and --metrics-bind-address, and the port its
// NetworkPolicy opens to the monitoring namespace.
const HubMetricsPort = 8080

// MetricsPort is HubMetricsPort, for the templates.
func (HubValues) MetricsPort() int { return HubMetricsPort }

// BootstrapServiceAccount names the shared bootstrap ServiceAccount.
func (HubValues) BootstrapServiceAccount() string { return identity.BootstrapServiceAccount }

// AgentTokenNamespace is the hub namespace of the token driver's agent
// identities, which only the hub controller administers.
func (HubValues) AgentTokenNamespace() string { return identity.AgentTokenNamespace }

// BootstrapTokenGroup is the group of the bootstrap tokens bound to the
// bootstrap role.
func (HubValues) BootstrapTokenGroup() string { return identity.BootstrapTokenGroup }

// ClusterBootstrapUserPrefix starts the user names of the cluster-bound
// bootstrap ServiceAccounts, which the admission policies restrict.
func (HubValues) ClusterBootstrapUserPrefix() string { return identity.ClusterBootstrapUserPrefix }

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
func (ClusterBootstrapValues) Namespace() string { return identity.BootstrapNamespace }

// AgentValues parameterise the managed-cluster manifests in config/agent.
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
	// HubKubeAPIQPS and HubKubeAPIBurst limit the work agent's requests to
	// the hub (the Klusterlet's spec.workConfiguration, which the agent
	// reads at start); 0 leaves the agent's defaults, 50 and 100.
	HubKubeAPIQPS   int32
	HubKubeAPIBurst int32
	// WorkKubeAPIQPS and WorkKubeAPIBurst limit the work agent's requests
	// to the managed cluster (the Klusterlet's spec.workConfiguration
	// kubeAPIQPS and kubeAPIBurst, the agent's --work-kube-api-qps and
	// --work-kube-api-burst); 0 leaves the agent's defaults, 50 and 100.
	WorkKubeAPIQPS   int32
	WorkKubeAPIBurst int32
	// StatusSyncInterval and EvictionGracePeriod are the work agent's
	// --status-sync-interval and
	// --appliedmanifestwork-eviction-grace-period (Go durations); empty
	// leaves the agent's defaults.
	StatusSyncInterval  string
	EvictionGracePeriod string
	// FeatureGates is the agent's --feature-gates (featuregate.Set.Flag);
	// empty leaves every feature at its default.
	FeatureGates string
	// BootstrapKubeconfigSecrets name the bootstrap kubeconfig Secrets, one
	// per hub in order of preference, when they are not
	// bootstrap-hub-kubeconfig alone (the Klusterlet's
	// spec.registrationConfiguration.bootstrapKubeConfigs, the agent's
	// --bootstrap-kubeconfig-secret).
	BootstrapKubeconfigSecrets []string
	// HubConnectionTimeoutSeconds is how long the agent tolerates losing
	// its hub before it moves to the next one, with two or more bootstrap
	// kubeconfigs (the agent's --hub-connection-timeout); 0 leaves the
	// agent's default.
	HubConnectionTimeoutSeconds int32
	// StandbyHubs are the bootstrap kubeconfigs of standby hubs that
	// `kubectl ocm join` writes next to bootstrap-hub-kubeconfig, listed
	// after it in the Klusterlet's bootstrapKubeConfigs.
	StandbyHubs []StandbyHub
	// KubeAPIQPS and KubeAPIBurst limit the registration and add-on
	// agents' requests to the managed cluster (the Klusterlet's
	// spec.registrationConfiguration); 0 leaves the agent's defaults.
	KubeAPIQPS   int32
	KubeAPIBurst int32
	// PriorityClassName is the agent Pod's priority class.
	PriorityClassName string
	// HostAliases are entries of the agent Pod's hosts file, such as the
	// hub API server's address.
	HostAliases []corev1.HostAlias
	// Scheduling places the agent's Pod and sizes its container.
	Scheduling
}

// Namespace is the hub controller's own namespace, HubNamespace. The roles
// generated from RBAC markers name it as {{ .Namespace }}.
func (v HubValues) Namespace() string { return v.HubNamespace }

// Namespace is the agent's own namespace, AgentNamespace. The roles
// generated from RBAC markers name it as {{ .Namespace }}.
func (v AgentValues) Namespace() string { return v.AgentNamespace }

// HubTunnel reports whether the agent runs the hub tunnel, which its
// FeatureGates decide (featuregate.HubTunnel); a flag that does not parse
// leaves the tunnel's RBAC out (the agent refuses such a flag at start).
func (v AgentValues) HubTunnel() bool {
	gates, err := featuregate.Parse(featuregate.Agent, v.FeatureGates)
	return err == nil && gates.Enabled(featuregate.HubTunnel)
}

// withDefaults fills empty fields.
func (v HubValues) withDefaults() HubValues {
	v.Image = cmpOr(v.Image, DefaultImage())
	v.HubNamespace = cmpOr(v.HubNamespace, HubNamespace)
	v.OperatorNamespace = cmpOr(v.OperatorNamespace, OperatorNamespace)
	v.ClusterManagerName = cmpOr(v.ClusterManagerName, operatorv1.ClusterManagerName)
	return v
}

// withDefaults fills empty fields.
func (v AgentValues) withDefaults() AgentValues {
	v.Image = cmpOr(v.Image, DefaultImage())
	v.AgentNamespace = cmpOr(v.AgentNamespace, AgentNamespace)
	v.Mode = cmpOr(v.Mode, "Default")
	return v
}

// withHostedDefaults fills empty fields for Hosted mode.
func (v AgentValues) withHostedDefaults() AgentValues {
	v.Image = cmpOr(v.Image, DefaultImage())
	v.KlusterletName = cmpOr(v.KlusterletName, HostedKlusterletName(v.ClusterName))
	v.AgentNamespace = cmpOr(v.AgentNamespace, v.KlusterletName)
	v.Mode = cmpOr(v.Mode, "Hosted")
	return v
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// HubObjects returns everything the ClusterManager operator installs on the
// hub: the hub CRDs, then the rendered config/hub manifests.
func HubObjects(v HubValues) ([]*unstructured.Unstructured, error) {
	if err := ValidateConversionWebhookURL(v.ConversionWebhookURL); err != nil {
		return nil, err
	}
	v = v.withDefaults()
	crds, err := HubCRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if conversion.IsConverted(crd.Name) {
			crd.Spec.Conversion = conversion.WebhookConversion(v.HubNamespace, v.ConversionWebhookURL)
		}
	}
	manifests, err := Render("hub", v)
	if err != nil {
		return nil, err
	}
	return withCRDs(crds, manifests)
}

// AgentObjects returns everything `kubectl ocm join` installs on a managed
// cluster: the managed-cluster CRDs, then the rendered config/agent manifests.
func AgentObjects(v AgentValues) ([]*unstructured.Unstructured, error) {
	if v.ClusterName == "" {
		return nil, errors.New("agent manifests need a cluster name")
	}
	crds, err := ManagedClusterCRDs()
	if err != nil {
		return nil, err
	}
	manifests, err := Render("agent", v.withDefaults())
	if err != nil {
		return nil, err
	}
	return withCRDs(crds, manifests)
}

// ClusterBootstrapObjects returns what `kubectl ocm hub token --cluster-name`
// installs on the hub: a bootstrap ServiceAccount bound to cluster and its
// binding to the bootstrap role.
func ClusterBootstrapObjects(cluster string) ([]*unstructured.Unstructured, error) {
	if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
		return nil, fmt.Errorf("invalid cluster name %q: %s", cluster, strings.Join(errs, "; "))
	}
	return Render("cluster-bootstrap", ClusterBootstrapValues{ClusterName: cluster})
}

// HostedAgentObjects returns what `kubectl ocm join --mode hosted` installs:
// on the hosting cluster the Klusterlet CRD, then the rendered
// config/agent-hosted manifests (namespace klusterlet-<cluster>, Secrets,
// RBAC, Klusterlet, agent Deployment); on the managed cluster only the
// ClusterClaim and AppliedManifestWork CRDs.
func HostedAgentObjects(v AgentValues) (hosting, managed []*unstructured.Unstructured, err error) {
	if v.ClusterName == "" {
		return nil, nil, errors.New("agent manifests need a cluster name")
	}
	crds, err := ManagedClusterCRDs()
	if err != nil {
		return nil, nil, err
	}
	var hostingCRDs, managedCRDs []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if crd.Name == KlusterletsCRDName {
			hostingCRDs = append(hostingCRDs, crd)
		} else {
			managedCRDs = append(managedCRDs, crd)
		}
	}
	manifests, err := Render("agent-hosted", v.withHostedDefaults())
	if err != nil {
		return nil, nil, err
	}
	if hosting, err = withCRDs(hostingCRDs, manifests); err != nil {
		return nil, nil, err
	}
	if managed, err = withCRDs(managedCRDs, nil); err != nil {
		return nil, nil, err
	}
	return hosting, managed, nil
}

func withCRDs(crds []*apiextensionsv1.CustomResourceDefinition, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(crds)+len(objs))
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return nil, fmt.Errorf("convert CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		// As on every rendered object; it also lets `kubectl wait -l` find
		// the CRDs before objects of their kinds are applied.
		u.SetLabels(map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue})
		out = append(out, u)
	}
	return append(out, objs...), nil
}

// Render executes every *.yaml template in the embedded directory dir ("hub",
// "hub-operator", "agent", "agent-hosted", "cluster-bootstrap" or
// "klusterlet-operator"), in file-name order, with values, and decodes the
// resulting YAML documents (RenderFile).
func Render(dir string, values any) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(manifestFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded manifests %s: %w", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		objs, err := RenderFile(path.Join(dir, name), values)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// RenderFile executes one embedded template, such as "agent/30-klusterlet.yaml",
// with values and decodes the resulting YAML documents. Empty documents are
// skipped. Every object gets the PartOfLabel, which the files generated by
// controller-gen cannot carry.
func RenderFile(file string, values any) ([]*unstructured.Unstructured, error) {
	raw, err := manifestFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(file).Funcs(templateFuncs).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, values); err != nil {
		return nil, fmt.Errorf("render %s: %w", file, err)
	}
	objs, err := DecodeDocuments(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("decode rendered %s: %w", file, err)
	}
	for _, obj := range objs {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[apply.PartOfLabelKey] = apply.PartOfLabelValue
		obj.SetLabels(labels)
	}
	return objs, nil
}

// DecodeDocuments decodes a multi-document YAML (or JSON) stream into
// objects, skipping empty documents; a document without apiVersion or kind
// is an error.
func DecodeDocuments(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document without apiVersion and kind: %v", u.Object)
		}
		out = append(out, u)
	}
}
