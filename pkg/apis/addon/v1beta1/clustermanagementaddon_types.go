package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// ClusterManagementAddOn makes an add-on known to the hub. It is
// cluster-scoped; every ManagedClusterAddOn of the add-on carries its name.
// It holds the add-on's default configurations and the strategy that decides
// on which clusters the add-on manager installs it.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={cma,cmas}
// +kubebuilder:printcolumn:name="DISPLAY NAME",type=string,JSONPath=`.spec.addOnMeta.displayName`
type ClusterManagementAddOn struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the add-on's description, defaults and install strategy.
	// +required
	Spec ClusterManagementAddOnSpec `json:"spec"`

	// status is what the add-on manager observed of the defaults and rollouts.
	// +optional
	Status ClusterManagementAddOnStatus `json:"status,omitempty"`
}

// ClusterManagementAddOnSpec is the desired state of a ClusterManagementAddOn.
type ClusterManagementAddOnSpec struct {
	// addOnMeta is the add-on's display name and description.
	// +optional
	AddOnMeta AddOnMeta `json:"addOnMeta,omitempty"`

	// defaultConfigs are the configuration kinds the add-on accepts, each with
	// the object used wherever nothing more specific is configured. An entry
	// whose name is ReservedNoDefaultConfigName declares the kind without a
	// default object.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +listMapKey=resource
	DefaultConfigs []AddOnConfig `json:"defaultConfigs,omitempty"`

	// installStrategy decides who creates the ManagedClusterAddOns: users
	// (Manual, the default) or the add-on manager for the clusters of placements.
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

// InstallStrategy decides on which clusters an add-on is installed.
type InstallStrategy struct {
	// type is Manual (users create ManagedClusterAddOns) or Placements (the
	// add-on manager keeps one in the namespace of each cluster the placements
	// select, and removes it when the cluster is no longer selected).
	// +optional
	// +kubebuilder:default=Manual
	// +kubebuilder:validation:Enum=Manual;Placements
	Type string `json:"type"`

	// placements are the Placements whose clusters get the add-on when type
	// is Placements. When several select one cluster, the last one listed applies.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	Placements []PlacementStrategy `json:"placements,omitempty"`
}

// PlacementStrategy is one Placement of an install strategy, with the
// configurations and rollout used on its clusters.
type PlacementStrategy struct {
	PlacementRef `json:",inline"`

	// configs apply to the Placement's clusters; they take precedence over
	// defaultConfigs, and a ManagedClusterAddOn's own configs take precedence over them.
	// +optional
	Configs []AddOnConfig `json:"configs,omitempty"`

	// rolloutStrategy paces how changed configurations reach the Placement's
	// clusters; type All unless set.
	// +optional
	// +kubebuilder:default={type: All}
	RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// ClusterManagementAddOnStatus is the observed state of a ClusterManagementAddOn.
type ClusterManagementAddOnStatus struct {
	// defaultConfigReferences are the default configurations with their spec
	// hashes. Note the capital C: v1alpha1 spells it defaultconfigReferences.
	// +optional
	DefaultConfigReferences []DefaultConfigReference `json:"defaultConfigReferences,omitempty"`

	// installProgressions follow the rollout on each install Placement.
	// +optional
	InstallProgressions []InstallProgression `json:"installProgressions,omitempty"`
}

// DefaultConfigReference is a default configuration and the hash of its spec.
type DefaultConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// desiredConfig is the default object and its spec hash.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`
}

// InstallProgression follows the rollout of an add-on's configurations on the
// clusters of one install Placement.
type InstallProgression struct {
	PlacementRef `json:",inline"`

	// configReferences say, per configuration, what is desired and what has
	// reached the Placement's clusters.
	// +optional
	ConfigReferences []InstallConfigReference `json:"configReferences,omitempty"`

	// conditions of the rollout, of type Progressing.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// InstallConfigReference is the rollout state of one configuration on the
// clusters of an install Placement.
type InstallConfigReference struct {
	ConfigGroupResource `json:",inline"`

	// desiredConfig is the configuration the rollout is heading for.
	// +optional
	DesiredConfig *ConfigSpecHash `json:"desiredConfig,omitempty"`

	// lastKnownGoodConfig is the newest configuration that rolled out without failure.
	// +optional
	LastKnownGoodConfig *ConfigSpecHash `json:"lastKnownGoodConfig,omitempty"`

	// lastAppliedConfig is the configuration every cluster of the Placement applied.
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
