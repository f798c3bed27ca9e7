package v1alpha1

// AddOnMeta is display information about an add-on.
type AddOnMeta struct {
	// displayName is the add-on's name for display.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// description describes the add-on.
	// +optional
	Description string `json:"description,omitempty"`
}

// ConfigCoordinates locates the CRD and custom resource configuring an add-on.
//
// Deprecated: use supportedConfigs and configs instead.
type ConfigCoordinates struct {
	// crdName is the name of the CRD that configures the add-on.
	// +optional
	CRDName string `json:"crdName,omitempty"`

	// crName is the name of the custom resource that configures the add-on on
	// every cluster.
	// +optional
	CRName string `json:"crName,omitempty"`

	// lastObservedGeneration is the last observed generation of that custom resource.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`
}

// ConfigGroupResource is the group and resource of an add-on configuration kind.
type ConfigGroupResource struct {
	// group is the API group of the configuration; empty for the core group.
	// +optional
	// +kubebuilder:default=""
	Group string `json:"group"`

	// resource is the resource name of the configuration, such as addondeploymentconfigs.
	// +required
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`
}

// ConfigReferent is the namespace and name of an add-on configuration.
type ConfigReferent struct {
	// namespace is the namespace of the configuration; empty for cluster-scoped ones.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name is the name of the configuration.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// AddOnConfig references one add-on configuration object.
type AddOnConfig struct {
	ConfigGroupResource `json:",inline"`

	ConfigReferent `json:",inline"`
}

// ConfigSpecHash is a configuration object together with the hash of its spec.
type ConfigSpecHash struct {
	ConfigReferent `json:",inline"`

	// specHash is the hash of the configuration's spec.
	// +optional
	SpecHash string `json:"specHash"`
}

// PlacementRef names a Placement.
type PlacementRef struct {
	// namespace is the namespace of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`

	// name is the name of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
