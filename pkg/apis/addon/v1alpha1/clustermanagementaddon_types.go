package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// ClusterManagementAddOn registers an add-on with the hub. It is
// cluster-scoped, and its name is the name of the add-on's
// ManagedClusterAddOns in the cluster namespaces. It lists the configuration
// kinds the add-on supports with their defaults, and says whether the add-on
// manager installs the add-on on clusters selected by Placements.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={cma,cmas}
// +kubebuilder:printcolumn:name="DISPLAY NAME",type=string,JSONPath=`.spec.addOnMeta.displayName`
// +kubebuilder:printcolumn:name="CRD NAME",type=string,JSONPath=`.spec.addOnConfiguration.crdName`
type ClusterManagementAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the add-on and how it is installed.
	// +required
	Spec ClusterManagementAddOnSpec `json:"spec"`

	// status reports the add-on's configurations and install progress.
	// +optional
	Status ClusterManagementAddOnStatus `json:"status,omitempty"`
}

// ClusterManagementAddOnSpec is the desired state of a ClusterManagementAddOn.
type ClusterManagementAddOnSpec struct {
	// addOnMeta is display information about the add-on.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitempty"`

	// addOnConfiguration locates the add-on's configuration CRD.
	//
	// Deprecated: use supportedConfigs instead.
	// +optional
	AddOnConfiguration ConfigCoordinates `json:"addOnConfiguration,omitempty"`

	// supportedConfigs are the configuration kinds the add-on supports, each
	// with an optional default configuration object used on every cluster.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	SupportedConfigs []ConfigMeta `json:"supportedConfigs,omitempty"`

	// installStrategy says whether ManagedClusterAddOns are created by hand
	// (Manual, the default) or by the add-on manager for the clusters selected
	// by Placements.
	// +optional
	// +kubebuilder:default={type: Manual}
	InstallStrategy InstallStrategy `json:"installStrategy,omitempty"`

	// hostedModeAutoDiscovery, with mode Enable, lets the ManagedClusterAddOns
	// of this add-on that ask for Hosted mode (annotation
	// addon.open-cluster-management.io/install-mode: Hosted) without naming a
	// hosting cluster have the hub name it: the cluster their cluster's
	// agent reports in its ClusterClaim hosting-cluster.open-cluster-management.io,
	// when both clusters are in one ManagedClusterSet other than default and
	// global. Disabled by default.
	// +optional
	HostedModeAutoDiscovery *HostedModeAutoDiscoveryConfig `json:"hostedModeAutoDiscovery,omitempty"`
}

// HostedModeAutoDiscoveryConfig configures the discovery of the hosting
// cluster of hosted add-ons.
type HostedModeAutoDiscoveryConfig struct {
	// mode is Enable or Disable (the default).
	// +optional
	// +kubebuilder:validation:Enum=Enable;Disable
	Mode HostedModeAutoDiscoveryModeType `json:"mode,omitempty"`
}

// HostedModeAutoDiscoveryModeType says whether the hub discovers the
// hosting cluster of hosted add-ons.
type HostedModeAutoDiscoveryModeType string

const (
	// HostedModeAutoDiscoveryModeEnable discovers it.
	HostedModeAutoDiscoveryModeEnable HostedModeAutoDiscoveryModeType = "Enable"
	// HostedModeAutoDiscoveryModeDisable does not (the default).
	HostedModeAutoDiscoveryModeDisable HostedModeAutoDiscoveryModeType = "Disable"
)

// AutoDiscoveryEnabled reports whether s enables the discovery of the
// hosting cluster of hosted add-ons.
func (s *ClusterManagementAddOnSpec) AutoDiscoveryEnabled() bool {
	return s.HostedModeAutoDiscovery != nil && s.HostedModeAutoDiscovery.Mode == HostedModeAutoDiscoveryModeEnable
}

// ConfigMeta is a configuration kind an add-on supports.
type ConfigMeta struct {
	ConfigGroupResource `json:",inline"`

	// defaultConfig is the configuration object used on every cluster that
	// configures nothing else for this kind.
	// +optional
	DefaultConfig *ConfigReferent `json:"defaultConfig,omitempty"`
}

// InstallStrategy says how an add-on is installed on clusters.
type InstallStrategy struct {
	// type is Manual (the default: ManagedClusterAddOns are created by hand)
	// or Placements (the add-on manager creates one in the namespace of every
	// cluster selected by placements and deletes it when the cluster leaves them).
	// +optional
	// +kubebuilder:default=Manual
	// +kubebuilder:validation:Enum=Manual;Placements
	Type string `json:"type"`

	// placements select the clusters when type is Placements, with the
	// configurations and rollout strategy to use on them. For a cluster
	// selected by several placements, the later one wins.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	Placements []PlacementStrategy `json:"placements,omitempty"`
}

// PlacementStrategy installs an add-on on the clusters of one Placement.
type PlacementStrategy struct {
	PlacementRef `json:",inline"`

	// configs are configuration objects for the placement's clusters. They
	// override the defaults and are overridden by a ManagedClusterAddOn's own configs.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`

	// rolloutStrategy says how configuration changes reach the placement's
	// clusters. Defaults to type All.
	// +optional
	// +kubebuilder:default={type: All}
	RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// ClusterManagementAddOnStatus is the observed state of a ClusterManagementAddOn.
type ClusterManagementAddOnStatus struct {
	// defaultconfigReferences are the default configurations with the hashes
	// of their specs. The lowercase c is OCM's v1alpha1 spelling.
	// +optional
	DefaultConfigReferences []DefaultConfigReference `json:"defaultconfigReferences,omitempty"`

	// installProgressions report the rollout on the clusters of each install placement.
	// +optional
	InstallProgressions []InstallProgression `json:"installProgressions,omitempty"`
}

// DefaultConfigReference is a default configuration of an add-on.
type DefaultConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// desiredConfig is the configuration object and the hash of its spec.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`
}

// InstallProgression reports the rollout of an add-on on the clusters of one
// install placement.
type InstallProgression struct {
	PlacementRef `json:",inline"`

	// configReferences are the placement's configurations and how far they
	// have rolled out.
	// +optional
	ConfigReferences []InstallConfigReference `json:"configReferences,omitempty"`

	// conditions report the rollout; type Progressing.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// InstallConfigReference reports the rollout of one configuration on the
// clusters of an install placement.
type InstallConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// desiredConfig is the configuration being rolled out.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// lastKnownGoodConfig is the last configuration that rolled out successfully.
	// +optional
	LastKnownGoodConfig *ConfigSpecHash `json:"lastKnownGoodConfig,omitempty"`

	// lastAppliedConfig is the configuration last applied to every cluster of
	// the placement.
	// +optional
	LastAppliedConfig *ConfigSpecHash `json:"lastAppliedConfig,omitempty"`
}

// ClusterManagementAddOnList is a list of ClusterManagementAddOns.
//
// +kubebuilder:object:root=true
type ClusterManagementAddOnList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ClusterManagementAddOns.
	Items []ClusterManagementAddOn `json:"items"`
}
