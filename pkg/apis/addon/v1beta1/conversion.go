package v1beta1

// Annotations and values that carry, across a conversion, what one version
// of the group can hold and the other cannot. Conversion reads and removes
// them; they are not meant to be set by hand.
const (
	// InstallNamespaceAnnotation holds a v1alpha1 ManagedClusterAddOn's
	// spec.installNamespace on the v1beta1 object, which has no such field.
	// The key is OCM's, and OCM's add-on managers read it at v1beta1.
	InstallNamespaceAnnotation = "addon.open-cluster-management.io/v1alpha1-install-namespace"

	// V1alpha1FieldsAnnotation holds, on a v1beta1 object, a JSON object of
	// the v1alpha1 fields v1beta1 has no place for: a ClusterManagementAddOn's
	// spec.addOnConfiguration, and a ManagedClusterAddOn's
	// status.addOnConfiguration, status.kubeClientDriver without a kubeClient
	// registration, the organization units of kube-apiserver-client
	// registrations, and configReferences' deprecated namespace and name.
	V1alpha1FieldsAnnotation = "addon.open-cluster-management.io/v1alpha1-fields"

	// V1beta1FieldsAnnotation holds, on a v1alpha1 object, a JSON object of
	// the v1beta1 fields v1alpha1 has no place for: the drivers of a
	// ManagedClusterAddOn's kubeClient registrations when they differ.
	V1beta1FieldsAnnotation = "addon.open-cluster-management.io/v1beta1-fields"

	// ReservedNoDefaultConfigName is the name of a ClusterManagementAddOn's
	// defaultConfigs entry that declares a configuration kind without a
	// default object, as a v1alpha1 supportedConfigs entry without
	// defaultConfig does. OCM uses the same value; it is no valid object name.
	ReservedNoDefaultConfigName = "__reserved_no_default__"
)

// Hub marks ClusterManagementAddOn as the conversion hub of its kind.
func (*ClusterManagementAddOn) Hub() {}

// Hub marks ManagedClusterAddOn as the conversion hub of its kind.
func (*ManagedClusterAddOn) Hub() {}

// Hub marks AddOnDeploymentConfig as the conversion hub of its kind.
func (*AddOnDeploymentConfig) Hub() {}

// Hub marks AddOnTemplate as the conversion hub of its kind.
func (*AddOnTemplate) Hub() {}
