package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlacementDecision holds part of the decisions of one Placement. The
// scheduler names them <placement>-decision-<n> (n from 1), keeps at most 100
// decisions in each, owns them by the Placement, and labels them with
// cluster.open-cluster-management.io/placement=<placement name> and their
// decision group's name and index.
//
// When the Placement sets spec.numberOfClusters the decisions of all its
// PlacementDecisions add up to that number, some of them empty when too few
// clusters match; otherwise there is one decision per matching cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type PlacementDecision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status holds the decisions.
	// +optional
	Status PlacementDecisionStatus `json:"status,omitempty"`
}

// PlacementDecisionStatus holds the decisions of a PlacementDecision.
type PlacementDecisionStatus struct {
	// decisions are the selected clusters, at most 100 per PlacementDecision.
	// +required
	Decisions []ClusterDecision `json:"decisions"`
}

// ClusterDecision is one selected cluster. An empty clusterName means the
// decision is not scheduled yet.
type ClusterDecision struct {
	// clusterName is the name of the selected ManagedCluster, unique across the
	// PlacementDecisions of a Placement.
	// +required
	ClusterName string `json:"clusterName"`

	// reason says why the cluster was selected.
	// +required
	Reason string `json:"reason"`

	// score is the cluster's total prioritizer score when it was selected.
	// +optional
	Score int64 `json:"score,omitempty"`
}

// PlacementDecisionList is a list of PlacementDecisions.
//
// +kubebuilder:object:root=true
type PlacementDecisionList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the PlacementDecisions.
	Items []PlacementDecision `json:"items"`
}
