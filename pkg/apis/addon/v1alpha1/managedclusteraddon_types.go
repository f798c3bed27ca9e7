package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedClusterAddOn enables an add-on on one managed cluster and reports its
// state there. It lives in the cluster namespace on the hub and has the name
// of its ClusterManagementAddOn.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName={mca,mcas}
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].status`
type ManagedClusterAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is where and with which configurations to install the add-on agent.
	// +required
	Spec ManagedClusterAddOnSpec `json:"spec"`

	// status is the add-on's state on the cluster.
	// +optional
	Status ManagedClusterAddOnStatus `json:"status,omitempty"`
}

// ManagedClusterAddOnSpec is the desired state of a ManagedClusterAddOn.
type ManagedClusterAddOnSpec struct {
	// installNamespace is the namespace on the managed cluster to install the
	// add-on agent in. Defaults to open-cluster-management-agent-addon.
	//
	// Deprecated: configure the namespace with an AddOnDeploymentConfig's
	// agentInstallNamespace instead.
	// +optional
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	InstallNamespace string `json:"installNamespace,omitempty"`

	// configs are configuration objects for this cluster; they override the
	// ClusterManagementAddOn's defaults and install-strategy configs.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`
}

// ManagedClusterAddOnStatus is the observed state of a ManagedClusterAddOn.
type ManagedClusterAddOnStatus struct {
	// conditions report the add-on's state: Available, Degraded, Progressing,
	// Configured, ManifestApplied, RegistrationApplied and more (see the
	// ManagedClusterAddOnCondition* constants).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// relatedObjects are objects related to the add-on, such as its
	// ClusterManagementAddOn.
	// +optional
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`

	// addOnMeta is copied from the ClusterManagementAddOn.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta"`

	// addOnConfiguration is copied from the ClusterManagementAddOn.
	//
	// Deprecated: use configReferences instead.
	// +optional
	AddOnConfiguration ConfigCoordinates `json:"addOnConfiguration"`

	// supportedConfigs are the configuration kinds the add-on supports.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	SupportedConfigs []ConfigGroupResource `json:"supportedConfigs,omitempty"`

	// configReferences are the effective configurations of the add-on on this
	// cluster, with the spec hashes desired and last applied.
	// +optional
	ConfigReferences []ConfigReference `json:"configReferences,omitempty"`

	// namespace is the namespace on the managed cluster where the agent keeps
	// the add-on's hub credentials and lease.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// registrations say how the add-on agent authenticates to the hub: one
	// client certificate (CSR) per entry. With the signer
	// kubernetes.io/kube-apiserver-client the agent writes the Secret
	// <addon>-hub-kubeconfig, otherwise <addon>-<signer>-client-cert.
	// +optional
	Registrations []RegistrationConfig `json:"registrations,omitempty"`

	// healthCheck says how the add-on's health is determined.
	// +optional
	HealthCheck HealthCheck `json:"healthCheck,omitempty"`

	// kubeClientDriver is how the agent obtains the add-on's hub credential
	// for the kube-apiserver-client signer: csr or token.
	// +optional
	// +kubebuilder:validation:Enum=csr;token
	KubeClientDriver string `json:"kubeClientDriver,omitempty"`
}

// ConfigReference is an effective configuration of an add-on on one cluster.
type ConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// ConfigReferent is the configuration object.
	//
	// Deprecated: use desiredConfig instead.
	ConfigReferent `json:",inline"`

	// lastObservedGeneration is the configuration object's generation last observed.
	//
	// Deprecated: compare spec hashes instead.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`

	// desiredConfig is the configuration object and the hash of its spec that
	// should be applied.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// lastAppliedConfig is the configuration object and spec hash last applied.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// ObjectReference identifies an object related to an add-on.
type ObjectReference struct {
	// group is the API group of the object.
	// +required
	Group string `json:"group"`

	// resource is the resource name of the object's kind.
	// +required
	Resource string `json:"resource"`

	// namespace is the namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name is the name of the object.
	// +required
	Name string `json:"name"`
}

// RegistrationConfig is one hub credential of an add-on agent.
type RegistrationConfig struct {
	// signerName is the signer of the agent's CSR, such as
	// kubernetes.io/kube-apiserver-client.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	SignerName string `json:"signerName"`

	// subject is the identity in the certificate. Unset means the default
	// user system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<addon>
	// in the add-on's groups.
	// +optional
	Subject Subject `json:"subject,omitempty"`
}

// Subject is the identity of an add-on agent's client certificate.
type Subject struct {
	// user is the user name.
	// +optional
	User string `json:"user"`

	// groups are the groups.
	// +optional
	Groups []string `json:"groups,omitempty"`

	// organizationUnit are the organizational units.
	// +optional
	OrganizationUnits []string `json:"organizationUnit,omitempty"`
}

// HealthCheckMode is how an add-on's health is determined.
//
// +kubebuilder:validation:Enum=Lease;Customized
type HealthCheckMode string

const (
	// HealthCheckModeLease judges health from a Lease the add-on agent renews
	// in its install namespace.
	HealthCheckModeLease HealthCheckMode = "Lease"
	// HealthCheckModeCustomized leaves health to the add-on's own controller on the hub.
	HealthCheckModeCustomized HealthCheckMode = "Customized"
)

// HealthCheck says how an add-on's health is determined.
type HealthCheck struct {
	// mode is Lease (the default) or Customized.
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
