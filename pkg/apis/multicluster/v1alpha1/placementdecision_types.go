package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels KEP-5313 defines for PlacementDecisions, by which consumers find
// the slices of one decision. A PlacementDecision also carries
// LabelClusterManagerKey, naming the scheduler that writes it.
const (
	// DecisionKeyLabel links the slices of one decision: a scheduler whose
	// decision spans several PlacementDecisions sets the same value on all
	// of them.
	DecisionKeyLabel = "multicluster.x-k8s.io/decision-key"
	// DecisionIndexLabel is the position of a slice among the slices of its
	// decision, from 0, when their order matters.
	DecisionIndexLabel = "multicluster.x-k8s.io/decision-index"
	// PlacementKeyLabel links a decision to the request (a placement or a
	// workload) it answers.
	PlacementKeyLabel = "multicluster.x-k8s.io/placement-key"
	// MaxClusterDecisions is the most decisions one PlacementDecision holds.
	MaxClusterDecisions = 100
)

// PlacementDecision is the set of clusters a scheduler chose, at a point in
// time, as KEP-5313 (the Placement Decision API) defines it: data only, the
// interface between schedulers, which write it, and consumers (GitOps
// engines, workload controllers), which read it. A decision of more than
// 100 clusters spans several PlacementDecisions (slices), which share the
// label multicluster.x-k8s.io/decision-key.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Decisions are the clusters chosen, each a reference to its
	// ClusterProfile.
	// +required
	// +kubebuilder:validation:MinItems=0
	// +kubebuilder:validation:MaxItems=100
	Decisions []ClusterDecision `json:"decisions"`

	// SchedulerName names the scheduler that wrote this decision.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
}

// ClusterDecision is one chosen cluster.
type ClusterDecision struct {
	// ClusterProfileRef is the ClusterProfile of the chosen cluster.
	// +required
	ClusterProfileRef ClusterProfileReference `json:"clusterProfileRef"`

	// Reason says why the cluster was chosen.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ClusterProfileReference names a ClusterProfile.
type ClusterProfileReference struct {
	// Name is the ClusterProfile's name.
	// +required
	Name string `json:"name"`

	// Namespace is the ClusterProfile's namespace; empty means the
	// namespace of the PlacementDecision.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// PlacementDecisionList is a list of PlacementDecisions.
//
// +kubebuilder:object:root=true
type PlacementDecisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PlacementDecisions.
	Items []PlacementDecision `json:"items"`
}
