package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstallMode is how the components of one side are deployed.
type InstallMode string

const (
	// InstallModeDefault runs the components on the cluster they serve.
	InstallModeDefault InstallMode = "Default"
	// InstallModeHosted runs the components on a separate management cluster.
	InstallModeHosted InstallMode = "Hosted"
	// InstallModeSingleton runs the agent as a single deployment.
	InstallModeSingleton InstallMode = "Singleton"
	// InstallModeSingletonHosted runs the agent as a single deployment on a
	// management cluster.
	InstallModeSingletonHosted InstallMode = "SingletonHosted"
)

// NodePlacement sets where the pods of the components are scheduled.
type NodePlacement struct {
	// nodeSelector is the pods' node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations are the pods' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// FeatureGateModeType says whether a feature gate is enabled.
type FeatureGateModeType string

const (
	// FeatureGateModeTypeEnable enables the feature.
	FeatureGateModeTypeEnable FeatureGateModeType = "Enable"
	// FeatureGateModeTypeDisable disables the feature.
	FeatureGateModeTypeDisable FeatureGateModeType = "Disable"
)

// FeatureGate turns one feature of a component on or off. Unknown features
// are ignored.
type FeatureGate struct {
	// feature is the name of the feature gate, such as ManagedClusterAutoApproval.
	// +required
	// +kubebuilder:validation:MinLength=1
	Feature string `json:"feature"`

	// mode is Enable or Disable (the default).
	// +optional
	// +kubebuilder:default=Disable
	// +kubebuilder:validation:Enum=Enable;Disable
	Mode FeatureGateModeType `json:"mode,omitempty"`
}

// ResourceQosClass is the resource profile of the components' containers.
type ResourceQosClass string

const (
	// ResourceQosClassDefault uses the shipped requests and no limits.
	ResourceQosClassDefault ResourceQosClass = "Default"
	// ResourceQosClassBestEffort sets no requests and no limits.
	ResourceQosClassBestEffort ResourceQosClass = "BestEffort"
	// ResourceQosClassResourceRequirement uses resourceRequirements.
	ResourceQosClassResourceRequirement ResourceQosClass = "ResourceRequirement"
)

// ResourceRequirement sets the resources of every container of the components.
type ResourceRequirement struct {
	// type is Default (the default), BestEffort or ResourceRequirement.
	// +optional
	// +kubebuilder:default=Default
	// +kubebuilder:validation:Enum=Default;BestEffort;ResourceRequirement
	Type ResourceQosClass `json:"type"`

	// resourceRequirements are the requests and limits when type is ResourceRequirement.
	// +optional
	ResourceRequirements *corev1.ResourceRequirements `json:"resourceRequirements,omitempty"`
}

// RelatedResourceMeta identifies an object the installer manages.
type RelatedResourceMeta struct {
	// group is the API group of the object.
	// +required
	Group string `json:"group"`

	// version is the API version of the object.
	// +required
	Version string `json:"version"`

	// resource is the resource name of the object's kind.
	// +required
	Resource string `json:"resource"`

	// namespace is the namespace of the object.
	// +optional
	Namespace string `json:"namespace"`

	// name is the name of the object.
	// +required
	Name string `json:"name"`
}

// GenerationStatus records the generation of an object the installer last applied.
type GenerationStatus struct {
	// group is the API group of the object.
	// +required
	Group string `json:"group"`

	// version is the API version of the object.
	// +required
	Version string `json:"version"`

	// resource is the resource name of the object's kind.
	// +required
	Resource string `json:"resource"`

	// namespace is the namespace of the object.
	// +optional
	Namespace string `json:"namespace"`

	// name is the name of the object.
	// +required
	Name string `json:"name"`

	// lastGeneration is the object's generation when the installer last applied it.
	// +required
	LastGeneration int64 `json:"lastGeneration"`
}

// TLSProfile is the TLS profile the operator passes to the components it
// runs (their --tls-min-version and --tls-cipher-suites). Each field that
// is set wins over the same key of ConfigMap ocm-tls-profile in the
// operator's namespace; unset, the ConfigMap's key applies, else the
// default: TLS 1.2 with Go's cipher suites.
type TLSProfile struct {
	// minTLSVersion is the minimum TLS version, spelled as Kubernetes'
	// --tls-min-version: VersionTLS12 or VersionTLS13.
	// +optional
	// +kubebuilder:validation:Enum=VersionTLS12;VersionTLS13
	MinTLSVersion string `json:"minTLSVersion,omitempty"`

	// cipherSuites are the cipher suites of TLS 1.2, by their IANA names
	// (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ...), in order of
	// preference. TLS 1.3's suites are fixed and cannot be chosen. The
	// operator refuses a name it does not know, and an insecure suite unless
	// the ConfigMap sets a minimum below VersionTLS12.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=64
	CipherSuites []string `json:"cipherSuites,omitempty"`
}

// LeaderElectionConfiguration sets the leader election timings of a
// component the operator deploys (the ocm-controller flags
// --leader-elect-lease-duration, --leader-elect-renew-deadline and
// --leader-elect-retry-period). Unset fields keep the binary's defaults:
// 60s, 40s and 2s for the hub controller, whose Lease lives on the hub's
// API server, 15s, 10s and 2s for the agent (docs/sizing.md argues them). The API server checks the
// fields set together; the operator checks them with the defaults of the
// unset ones and reports a refused combination as condition Applied False
// with reason LeaderElectionInvalid, rolling nothing out. OCM has no such
// field.
// +kubebuilder:validation:XValidation:rule="!has(self.leaseDuration) || !has(self.renewDeadline) || duration(self.leaseDuration) > duration(self.renewDeadline)",message="leaseDuration must be longer than renewDeadline"
// +kubebuilder:validation:XValidation:rule="!has(self.renewDeadline) || !has(self.retryPeriod) || duration(self.renewDeadline).getMilliseconds() * 5 > duration(self.retryPeriod).getMilliseconds() * 6",message="renewDeadline must be longer than 1.2 times retryPeriod (the leader elector's jitter)"
type LeaderElectionConfiguration struct {
	// leaseDuration is how long a standby replica waits after the leader's
	// last renewal before it takes the Lease, such as 60s: a longer lease
	// rides out a slower API server, and a standby takes over later after
	// the leader's Pod dies without releasing it.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	LeaseDuration *metav1.Duration `json:"leaseDuration,omitempty"`

	// renewDeadline is how long the leader keeps trying to renew its Lease
	// before it stops acting (and its process restarts), such as 40s;
	// shorter than leaseDuration.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	RenewDeadline *metav1.Duration `json:"renewDeadline,omitempty"`

	// retryPeriod is how often the replicas try to acquire or renew the
	// Lease, such as 2s; renewDeadline must be longer than 1.2 times it.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	RetryPeriod *metav1.Duration `json:"retryPeriod,omitempty"`
}
