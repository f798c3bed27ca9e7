package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// ManagedClusterSet is the v1beta1 view of a ManagedClusterSet, a named group
// of ManagedClusters. It is stored as v1beta2 (see that package for the
// semantics); this version exists so that manifests written for v1beta1 keep
// applying. New code should use v1beta2.
//
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="cluster.open-cluster-management.io/v1beta1 ManagedClusterSet is deprecated; use v1beta2"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={mclset,mclsets}
// +kubebuilder:printcolumn:name="Empty",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterSetEmpty")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ManagedClusterSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec selects the member clusters. When it is omitted the set selects
	// clusters by the exclusive cluster set label.
	// +optional
	// +kubebuilder:default={clusterSelector: {selectorType: ExclusiveClusterSetLabel}}
	Spec ManagedClusterSetSpec `json:"spec"`

	// status reports whether the set has members.
	// +optional
	Status ManagedClusterSetStatus `json:"status,omitempty"`
}

// ManagedClusterSetSpec is the desired state of a ManagedClusterSet.
type ManagedClusterSetSpec struct {
	// clusterSelector selects the member clusters.
	// +optional
	// +kubebuilder:default={selectorType: ExclusiveClusterSetLabel}
	ClusterSelector ManagedClusterSelector `json:"clusterSelector,omitempty"`

	// managedNamespaces are namespaces to create on every member cluster. The
	// field belongs to v1beta2; it is present here too so that reading a set at
	// either version returns the same object.
	// +optional
	// +listType=map
	// +listMapKey=name
	ManagedNamespaces []clusterv1.ManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// SelectorType is how a ManagedClusterSet selects its member clusters.
type SelectorType string

const (
	// ExclusiveClusterSetLabel selects the clusters labeled
	// cluster.open-cluster-management.io/clusterset=<set name>.
	ExclusiveClusterSetLabel SelectorType = "ExclusiveClusterSetLabel"
	// LegacyClusterSetLabel is the original v1beta1 name of
	// ExclusiveClusterSetLabel. It is still accepted at v1beta1 and means
	// exactly the same.
	LegacyClusterSetLabel SelectorType = "LegacyClusterSetLabel"
	// LabelSelector selects the clusters matched by spec.clusterSelector.labelSelector.
	LabelSelector SelectorType = "LabelSelector"
)

// ManagedClusterSelector selects the member clusters of a ManagedClusterSet.
type ManagedClusterSelector struct {
	// selectorType is ExclusiveClusterSetLabel (the default: clusters labeled
	// cluster.open-cluster-management.io/clusterset=<set name>), LabelSelector
	// (clusters matched by labelSelector), or LegacyClusterSetLabel, the older
	// spelling of ExclusiveClusterSetLabel, which every controller treats
	// exactly like ExclusiveClusterSetLabel. The value is stored as written,
	// so a set created with LegacyClusterSetLabel also reads back with it at v1beta2.
	// +optional
	// +kubebuilder:default=ExclusiveClusterSetLabel
	// +kubebuilder:validation:Enum=ExclusiveClusterSetLabel;LabelSelector;LegacyClusterSetLabel
	SelectorType SelectorType `json:"selectorType,omitempty"`

	// labelSelector selects the member clusters when selectorType is
	// LabelSelector. An empty selector selects every cluster.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ManagedClusterSetStatus is the observed state of a ManagedClusterSet.
type ManagedClusterSetStatus struct {
	// conditions report the set's state; type ClusterSetEmpty is True when no
	// cluster is selected.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions"`
}

// ManagedClusterSetList is a list of ManagedClusterSets.
//
// +kubebuilder:object:root=true
type ManagedClusterSetList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManagedClusterSets.
	Items []ManagedClusterSet `json:"items"`
}
