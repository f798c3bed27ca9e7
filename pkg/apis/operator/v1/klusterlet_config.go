package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MinClientCertExpirationSeconds is the shortest client certificate lifetime
// the agent requests (spec.registrationConfiguration.clientCertExpirationSeconds,
// the CSR's spec.expirationSeconds): an hour, as OCM's agent.
const MinClientCertExpirationSeconds = 3600

// MinHubConnectionTimeoutSeconds and DefaultHubConnectionTimeoutSeconds bound
// and default bootstrapKubeConfigs.localSecretsConfig.hubConnectionTimeoutSeconds,
// as in OCM.
const (
	MinHubConnectionTimeoutSeconds     = 180
	DefaultHubConnectionTimeoutSeconds = 600
)

// RegistrationConfiguration configures the registration agent.
type RegistrationConfiguration struct {
	// clientCertExpirationSeconds is the requested lifetime of the agent's
	// client certificate, the spec.expirationSeconds of its certificate
	// signing requests: at least 3600. 0 or unset leaves it to the hub's
	// signer, which also caps it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == 0 || self >= 3600",message="clientCertExpirationSeconds must be 0 (the hub signer's default) or at least 3600"
	ClientCertExpirationSeconds int32 `json:"clientCertExpirationSeconds,omitempty"`

	// featureGates turn registration agent features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// clusterAnnotations are set on the ManagedCluster when the agent creates
	// it; their keys must start with agent.open-cluster-management.io.
	// +optional
	ClusterAnnotations map[string]string `json:"clusterAnnotations,omitempty"`

	// clusterLabels are set on the ManagedCluster when the agent creates it.
	// +optional
	ClusterLabels map[string]string `json:"clusterLabels,omitempty"`

	// kubeAPIQPS is the agent's QPS towards the managed cluster, but for the
	// work agent's (workConfiguration.kubeAPIQPS); 50 by default.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="kubeAPIQPS must not be negative; 0 means the default, 50"
	KubeAPIQPS int32 `json:"kubeAPIQPS,omitempty"`

	// kubeAPIBurst is the agent's burst towards the managed cluster, but for
	// the work agent's (workConfiguration.kubeAPIBurst); 100 by default.
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="kubeAPIBurst must not be negative; 0 means the default, 100"
	KubeAPIBurst int32 `json:"kubeAPIBurst,omitempty"`

	// bootstrapKubeConfigs lists bootstrap kubeconfigs in order of preference,
	// for moving to another hub when the current one is lost.
	// +optional
	BootstrapKubeConfigs BootstrapKubeConfigs `json:"bootstrapKubeConfigs,omitempty"`

	// registrationDriver is how the agent authenticates to the hub.
	// +optional
	RegistrationDriver RegistrationDriver `json:"registrationDriver,omitempty"`

	// addOnKubeClientRegistrationDriver is how add-on agents obtain their hub
	// credentials for the kube-apiserver-client signer.
	// +optional
	AddOnKubeClientRegistrationDriver *AddOnRegistrationDriver `json:"addOnKubeClientRegistrationDriver,omitempty"`

	// clusterClaimConfiguration configures the reporting of ClusterClaims.
	// +optional
	ClusterClaimConfiguration *ClusterClaimConfiguration `json:"clusterClaimConfiguration,omitempty"`

	// clusterHealthCheckPeriod is how often the agent reports the cluster's
	// status (conditions, version, capacity, claims) to the hub when nothing
	// changes: the agent's --cluster-healthcheck-period, the name of OCM's
	// registration agent option, which OCM's Klusterlet does not expose.
	// Unset leaves the agent's default, 10s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="clusterHealthCheckPeriod must be at least 1s"
	ClusterHealthCheckPeriod *metav1.Duration `json:"clusterHealthCheckPeriod,omitempty"`
}

// ClusterClaimConfiguration configures the reporting of ClusterClaims.
type ClusterClaimConfiguration struct {
	// maxCustomClusterClaims is how many custom (not reserved) claims are
	// reported at most; 20 by default.
	// +required
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=0
	MaxCustomClusterClaims int32 `json:"maxCustomClusterClaims"`

	// reservedClusterClaimSuffixes are name suffixes of claims reported like
	// reserved ones, before the custom claims. At most 10.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	ReservedClusterClaimSuffixes []string `json:"reservedClusterClaimSuffixes,omitempty"`
}

// RegistrationDriver is how the agent authenticates to the hub.
type RegistrationDriver struct {
	// authType is csr (the default: client certificates signed by the hub's
	// kubernetes.io/kube-apiserver-client signer), token (short-lived
	// tokens of a ServiceAccount the hub creates in the cluster namespace
	// once the cluster is accepted, for hubs that sign no client
	// certificates), awsirsa or grpc. awsirsa and grpc are refused.
	// +optional
	// +kubebuilder:default=csr
	// +kubebuilder:validation:Enum=csr;token;awsirsa;grpc
	AuthType string `json:"authType,omitempty"`

	// awsIrsa configures authType awsirsa.
	// +optional
	AwsIrsa *AwsIrsa `json:"awsIrsa,omitempty"`
}

// AwsIrsa identifies the EKS clusters for the awsirsa driver.
type AwsIrsa struct {
	// hubClusterArn is the ARN of the hub EKS cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^arn:aws(?:-[a-z0-9]+)*:eks:([a-zA-Z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9-]+)$`
	HubClusterArn string `json:"hubClusterArn"`

	// managedClusterArn is the ARN of the managed EKS cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^arn:aws(?:-[a-z0-9]+)*:eks:([a-zA-Z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9-]+)$`
	ManagedClusterArn string `json:"managedClusterArn"`
}

// AddOnRegistrationDriver is how add-on agents obtain hub credentials.
type AddOnRegistrationDriver struct {
	// authType is csr or token.
	// +optional
	// +kubebuilder:validation:Enum=csr;token
	AuthType string `json:"authType,omitempty"`

	// token configures authType token.
	// +optional
	Token *TokenConfig `json:"token,omitempty"`
}

// TokenConfig configures token-based add-on credentials.
type TokenConfig struct {
	// expirationSeconds is the tokens' lifetime; 0 or unset means the hub's
	// certificate lifetime (typically a year).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ExpirationSeconds int64 `json:"expirationSeconds,omitempty"`
}

// TypeBootstrapKubeConfigs is the kind of bootstrap kubeconfig list.
type TypeBootstrapKubeConfigs string

const (
	// LocalSecrets lists bootstrap kubeconfigs in Secrets of the agent namespace.
	LocalSecrets TypeBootstrapKubeConfigs = "LocalSecrets"
	// None lists no extra bootstrap kubeconfigs.
	None TypeBootstrapKubeConfigs = "None"
)

// BootstrapKubeConfigs lists bootstrap kubeconfigs in order of preference.
type BootstrapKubeConfigs struct {
	// type is None (the default) or LocalSecrets.
	// +optional
	// +kubebuilder:default=None
	// +kubebuilder:validation:Enum=None;LocalSecrets
	Type TypeBootstrapKubeConfigs `json:"type,omitempty"`

	// localSecretsConfig lists the Secrets when type is LocalSecrets.
	// +optional
	LocalSecrets *LocalSecretsConfig `json:"localSecretsConfig,omitempty"`
}

// LocalSecretsConfig lists bootstrap kubeconfig Secrets in the agent namespace.
type LocalSecretsConfig struct {
	// kubeConfigSecrets are the Secrets, in order of preference; at least two.
	// +required
	// +kubebuilder:validation:MinItems=2
	KubeConfigSecrets []KubeConfigSecret `json:"kubeConfigSecrets"`

	// hubConnectionTimeoutSeconds is how long the agent tolerates losing the
	// hub before it bootstraps again; 600 by default, at least 180.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=180
	HubConnectionTimeoutSeconds int32 `json:"hubConnectionTimeoutSeconds,omitempty"`
}

// KubeConfigSecret names a bootstrap kubeconfig Secret.
type KubeConfigSecret struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// WorkAgentConfiguration configures the work agent.
type WorkAgentConfiguration struct {
	// featureGates turn work agent features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// kubeAPIQPS is the work agent's QPS towards the managed cluster; 50 by
	// default.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="kubeAPIQPS must not be negative; 0 means the default, 50"
	KubeAPIQPS int32 `json:"kubeAPIQPS,omitempty"`

	// kubeAPIBurst is the work agent's burst towards the managed cluster;
	// 100 by default.
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="kubeAPIBurst must not be negative; 0 means the default, 100"
	KubeAPIBurst int32 `json:"kubeAPIBurst,omitempty"`

	// hubKubeAPIQPS is the work agent's QPS towards the hub; 50 by default.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="hubKubeAPIQPS must not be negative; 0 means the default, 50"
	HubKubeAPIQPS int32 `json:"hubKubeAPIQPS,omitempty"`

	// hubKubeAPIBurst is the work agent's burst towards the hub; 100 by default.
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="hubKubeAPIBurst must not be negative; 0 means the default, 100"
	HubKubeAPIBurst int32 `json:"hubKubeAPIBurst,omitempty"`

	// appliedManifestWorkEvictionGracePeriod is how long the agent keeps an
	// AppliedManifestWork whose ManifestWork vanished from the hub, such as
	// 60m; the agent's default when unset.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	AppliedManifestWorkEvictionGracePeriod *metav1.Duration `json:"appliedManifestWorkEvictionGracePeriod,omitempty"`

	// statusSyncInterval is how often the agent refreshes the status of
	// ManifestWorks, between 5s and 1h.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	StatusSyncInterval *metav1.Duration `json:"statusSyncInterval,omitempty"`

	// workers sets how many objects the work agent's controllers reconcile
	// at once. OCM has no such field (its work agent has the flags only).
	// +optional
	Workers *WorkAgentWorkers `json:"workers,omitempty"`
}

// WorkAgentWorkers are the work agent's worker counts; unset fields keep
// the agent's default, 10.
type WorkAgentWorkers struct {
	// manifestWorks is how many ManifestWorks the agent reconciles at once:
	// applies, reports the status of and, once deleted, finalizes (the
	// agent's --manifestwork-agent-workers). At least 1; 10 when unset.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="workers.manifestWorks must be at least 1 (unset means 10)"
	ManifestWorks int32 `json:"manifestWorks,omitempty"`

	// appliedManifestWorkFinalize is how many AppliedManifestWorks the
	// agent finalizes (deletes the objects they own) or evicts at once (the
	// agent's --appliedmanifestwork-finalize-controller-workers). At least
	// 1; 10 when unset.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="workers.appliedManifestWorkFinalize must be at least 1 (unset means 10)"
	AppliedManifestWorkFinalize int32 `json:"appliedManifestWorkFinalize,omitempty"`
}

// KlusterletNetworkPolicyConfiguration configures the NetworkPolicies of the
// agent's namespace.
type KlusterletNetworkPolicyConfiguration struct {
	// monitoringNamespace is the namespace of the Prometheus scraper allowed
	// to reach the agent's metrics port. Unset adds no such policy: no Pod
	// reaches the metrics port.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	MonitoringNamespace string `json:"monitoringNamespace,omitempty"`
}
