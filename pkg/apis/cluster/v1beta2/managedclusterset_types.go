package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// ManagedClusterSet is a named group of ManagedClusters that workloads can be
// placed on. It is cluster-scoped.
//
// With the default selector type ExclusiveClusterSetLabel a cluster is a
// member when it carries the label cluster.open-cluster-management.io/clusterset
// with the set's name; changing that label needs permission to create the
// virtual subresource managedclustersets/join for both the old and the new
// set. With LabelSelector the set holds every cluster its selector matches.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
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
	// hub copies them into each member's status.managedNamespaces and the agent
	// creates them.
	// +optional
	// +listType=map
	// +listMapKey=name
	ManagedNamespaces []clusterv1.ManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// SelectorType is how a ManagedClusterSet selects its member clusters.
type SelectorType string

const (
	// ExclusiveClusterSetLabel selects the clusters labeled
	// cluster.open-cluster-management.io/clusterset=<set name>. A cluster can
	// be in at most one such set.
	ExclusiveClusterSetLabel SelectorType = "ExclusiveClusterSetLabel"
	// LabelSelector selects the clusters matched by spec.clusterSelector.labelSelector.
	LabelSelector SelectorType = "LabelSelector"
	// LegacyClusterSetLabel is the v1beta1 spelling of ExclusiveClusterSetLabel.
	// The v1beta2 schema does not accept it, but an object written as v1beta1
	// can carry it when read as v1beta2: treat it exactly like
	// ExclusiveClusterSetLabel (see ManagedClusterSelector.IsExclusive).
	LegacyClusterSetLabel SelectorType = "LegacyClusterSetLabel"
)

// ManagedClusterSelector selects the member clusters of a ManagedClusterSet.
type ManagedClusterSelector struct {
	// selectorType is ExclusiveClusterSetLabel (the default: clusters labeled
	// cluster.open-cluster-management.io/clusterset=<set name>) or
	// LabelSelector (clusters matched by labelSelector).
	// +optional
	// +kubebuilder:default=ExclusiveClusterSetLabel
	// +kubebuilder:validation:Enum=ExclusiveClusterSetLabel;LabelSelector
	SelectorType SelectorType `json:"selectorType,omitempty"`

	// labelSelector selects the member clusters when selectorType is
	// LabelSelector. An empty selector selects every cluster (the global set).
	// Operators are In, NotIn, Exists and DoesNotExist; In and NotIn need
	// values, Exists and DoesNotExist take none. A selector the API server
	// cannot reject (an invalid label key or value) is reported by condition
	// ClusterSetEmpty with reason InvalidClusterSelector.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="labelSelector.matchExpressions: operator must be one of In, NotIn, Exists, DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="labelSelector.matchExpressions: In and NotIn need values, Exists and DoesNotExist take none"
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
