package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedClusterAddOn turns an add-on on for one managed cluster and reports
// how it fares there. It lives in the cluster's namespace on the hub and is
// named after its ClusterManagementAddOn. The namespace the agent is
// installed in comes from an AddOnDeploymentConfig, or from the annotation
// addon.open-cluster-management.io/v1alpha1-install-namespace on objects
// created at v1alpha1.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName={mca,mcas}
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].status`
type ManagedClusterAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the configurations of the add-on on this cluster.
	// +required
	Spec ManagedClusterAddOnSpec `json:"spec"`

	// status is what the hub and the agent observed of the add-on on the cluster.
	// +optional
	Status ManagedClusterAddOnStatus `json:"status,omitempty"`
}

// ManagedClusterAddOnSpec is the desired state of a ManagedClusterAddOn.
type ManagedClusterAddOnSpec struct {
	// configs are configuration objects for this cluster only; they take
	// precedence over those of the ClusterManagementAddOn.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`
}

// ManagedClusterAddOnStatus is the observed state of a ManagedClusterAddOn.
type ManagedClusterAddOnStatus struct {
	// conditions describe the add-on on the cluster: Available, Degraded,
	// Progressing, Configured, ManifestApplied, RegistrationApplied and others.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// relatedObjects point at objects that belong with the add-on, such as its
	// ClusterManagementAddOn.
	// +optional
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`

	// addOnMeta mirrors the ClusterManagementAddOn's addOnMeta.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitempty"`

	// supportedConfigs are the configuration kinds this cluster's configs may name.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	SupportedConfigs []ConfigGroupResource `json:"supportedConfigs,omitempty"`

	// configReferences are the configurations in effect on this cluster, with
	// the spec hashes wanted and last applied.
	// +optional
	ConfigReferences []ConfigReference `json:"configReferences,omitempty"`

	// namespace is where, on the managed cluster, the agent keeps the
	// add-on's hub credentials and its lease.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// registrations are the hub credentials the add-on agent obtains, one per
	// entry: a kubeClient credential for the hub's kube-apiserver (Secret
	// <addon>-hub-kubeconfig) or a customSigner certificate (Secret
	// <addon>-<signer>-client-cert).
	// +optional
	Registrations []RegistrationConfig `json:"registrations,omitempty"`

	// healthCheck says how the add-on's health is judged.
	// +optional
	HealthCheck HealthCheck `json:"healthCheck,omitempty"`
}

// ConfigReference is a configuration in effect for an add-on on one cluster.
type ConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// lastObservedGeneration is the generation of the configuration object
	// the hub last saw.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration"`

	// desiredConfig is the configuration object and spec hash to apply.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// lastAppliedConfig is the configuration object and spec hash the agent
	// manifests were last applied with.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// ObjectReference points at an object related to an add-on.
type ObjectReference struct {
	// group of the object's API.
	// +required
	Group string `json:"group"`

	// resource is the plural resource name of the object's kind.
	// +required
	Resource string `json:"resource"`

	// namespace of the object; empty when cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the object.
	// +required
	Name string `json:"name"`
}

// RegistrationType is the kind of hub credential of a registration.
type RegistrationType string

const (
	// KubeClient is a credential for the hub's kube-apiserver, obtained with
	// the driver the agent reports (a CSR or a ServiceAccount token).
	KubeClient RegistrationType = "kubeClient"
	// CustomSigner is a client certificate issued by a signer other than the
	// kube-apiserver client signer, for endpoints of the add-on's own.
	CustomSigner RegistrationType = "customSigner"
)

// RegistrationConfig is one hub credential of an add-on agent.
type RegistrationConfig struct {
	// type is kubeClient or customSigner; the field of the same name holds
	// the details.
	// +required
	// +kubebuilder:validation:Enum=kubeClient;customSigner
	Type RegistrationType `json:"type"`

	// kubeClient details a kubeClient credential.
	// +optional
	KubeClient *KubeClientConfig `json:"kubeClient,omitempty"`

	// customSigner details a customSigner certificate.
	// +optional
	CustomSigner *CustomSignerConfig `json:"customSigner,omitempty"`
}

// KubeClientConfig details a credential for the hub's kube-apiserver.
type KubeClientConfig struct {
	// subject is the identity the credential carries; unset means the
	// default agent user and groups of the add-on on the cluster.
	// +optional
	Subject KubeClientSubject `json:"subject,omitempty"`

	// driver is how the agent obtains the credential, csr or token; the
	// agent sets it to say which one it uses.
	// +optional
	// +kubebuilder:validation:Enum=csr;token
	Driver string `json:"driver,omitempty"`
}

// CustomSignerConfig details a client certificate from a custom signer.
type CustomSignerConfig struct {
	// signerName is the signer the agent's CSR asks for, <domain>/<name>.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	SignerName string `json:"signerName"`

	// subject is the identity in the certificate.
	// +optional
	Subject Subject `json:"subject,omitempty"`
}

// BaseSubject is the user and groups of an add-on agent's identity.
type BaseSubject struct {
	// user is the identity's user name.
	// +optional
	User string `json:"user"`

	// groups the identity belongs to.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// KubeClientSubject is the identity of a kubeClient credential.
type KubeClientSubject struct {
	BaseSubject `json:",inline"`
}

// Subject is the identity in a custom signer's certificate.
type Subject struct {
	BaseSubject `json:",inline"`

	// organizationUnits are the certificate's organizational units.
	// +optional
	OrganizationUnits []string `json:"organizationUnits,omitempty"`
}

// HealthCheckMode is how the health of an add-on is judged.
//
// +kubebuilder:validation:Enum=Lease;Customized
type HealthCheckMode string

const (
	// HealthCheckModeLease judges health by a Lease that the agent keeps
	// renewing in its namespace on the managed cluster.
	HealthCheckModeLease HealthCheckMode = "Lease"
	// HealthCheckModeCustomized leaves health to the add-on's own manager on the hub.
	HealthCheckModeCustomized HealthCheckMode = "Customized"
)

// HealthCheck says how the health of an add-on is judged.
type HealthCheck struct {
	// mode is Lease, the default, or Customized.
	// +optional
	// +kubebuilder:default=Lease
	Mode HealthCheckMode `json:"mode,omitempty"`
}

// ManagedClusterAddOnList is a list of ManagedClusterAddOns.
//
// +kubebuilder:object:root=true
type ManagedClusterAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManagedClusterAddOns.
	Items []ManagedClusterAddOn `json:"items"`
}
