package v1beta1

// AddOnMeta is what users see of an add-on: its display name and description.
type AddOnMeta struct {
	// displayName is the add-on's human-readable name.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// description says what the add-on does.
	// +optional
	Description string `json:"description,omitempty"`
}

// ConfigGroupResource names a kind of add-on configuration by API group and resource.
type ConfigGroupResource struct {
	// group is the configuration's API group; "" is the core group.
	// +optional
	// +kubebuilder:default=""
	Group string `json:"group"`

	// resource is the configuration's plural resource name, for example addondeploymentconfigs.
	// +required
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`
}

// ConfigReferent names one add-on configuration object.
type ConfigReferent struct {
	// namespace holds the configuration; empty when it is cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the configuration object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// AddOnConfig is a reference to one configuration object of a given kind.
type AddOnConfig struct {
	ConfigGroupResource `json:",inline"`

	ConfigReferent `json:",inline"`
}

// ConfigSpecHash pairs a configuration object with a hash of its spec, so
// that a change of the spec can be noticed and rolled out.
type ConfigSpecHash struct {
	ConfigReferent `json:",inline"`

	// specHash is the hash of the configuration object's spec.
	// +optional
	SpecHash string `json:"specHash"`
}

// PlacementRef is the namespace and name of a Placement.
type PlacementRef struct {
	// namespace the Placement lives in.
	// +required
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`

	// name of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
