package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement selects ManagedClusters for workloads in its namespace.
//
// Candidates are the members of the ManagedClusterSets bound to the namespace
// by ManagedClusterSetBindings (optionally narrowed by spec.clusterSets).
// Clusters with taints the placement does not tolerate are filtered out, the
// predicates select among the rest, prioritizers score them, and the best
// spec.numberOfClusters are written to PlacementDecisions labeled
// cluster.open-cluster-management.io/placement=<placement name>. Consumers
// apply workloads to the decided clusters and remove them from clusters that
// leave the decisions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementSatisfied")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementSatisfied")].reason`
// +kubebuilder:printcolumn:name="SelectedClusters",type=integer,JSONPath=`.status.numberOfSelectedClusters`
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the selection rule. An empty spec selects every cluster of the
	// cluster sets bound to the namespace.
	// +required
	Spec PlacementSpec `json:"spec"`

	// status reports the outcome of the last scheduling.
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementSpec is the desired state of a Placement. Its fields are ANDed.
type PlacementSpec struct {
	// clusterSets narrows the candidates to these ManagedClusterSets, intersected
	// with the sets bound to the namespace. Empty means every bound set.
	// +optional
	ClusterSets []string `json:"clusterSets,omitempty"`

	// numberOfClusters is how many clusters to select. Unset selects every
	// matching cluster. When fewer clusters match, all of them are selected and
	// the PlacementSatisfied condition is False.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// predicates select clusters; a cluster matching any predicate is a
	// candidate. Empty selects every candidate.
	// +optional
	Predicates []ClusterPredicate `json:"predicates,omitempty"`

	// prioritizerPolicy configures how candidates are scored when
	// numberOfClusters limits the selection.
	// +optional
	PrioritizerPolicy PrioritizerPolicy `json:"prioritizerPolicy"`

	// spreadPolicy spreads the decisions over topology domains (the values of
	// a cluster label or claim), like Kubernetes pod topology spread: clusters
	// are taken in score order, and a cluster is taken only while its domain
	// stays within maxSkew of the least-used domain (DoNotSchedule), or is
	// preferred when it keeps the skew lowest (ScheduleAnyway). This goes
	// beyond OCM, which accepts the field but does not act on it.
	// +optional
	SpreadPolicy SpreadPolicy `json:"spreadPolicy,omitempty"`

	// tolerations let the placement select clusters with matching taints.
	// Without tolerations, unreachable and unavailable clusters are never selected.
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// decisionStrategy divides the selected clusters into decision groups.
	// +optional
	DecisionStrategy DecisionStrategy `json:"decisionStrategy,omitempty"`

	// sortBy orders the selected clusters in the decisions and in each
	// decision group: ClusterName (the default, as OCM orders them) or Score
	// (highest total score first, ties by name). It does not change which
	// clusters are selected.
	// +optional
	// +kubebuilder:validation:Enum=ClusterName;Score
	SortBy PlacementSortBy `json:"sortBy,omitempty"`

	// scoreRateLimit is the minimum interval between two rescheduling runs
	// caused only by score changes, as a duration such as 1m; 1m when unset.
	// The API is accepted and stored, but the scheduler does not act on it yet.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	ScoreRateLimit *metav1.Duration `json:"scoreRateLimit,omitempty"`
}

// PlacementSortBy is how the selected clusters of a Placement are ordered.
type PlacementSortBy string

const (
	// SortByClusterName orders the selected clusters by name.
	SortByClusterName PlacementSortBy = "ClusterName"
	// SortByScore orders the selected clusters by descending score.
	SortByScore PlacementSortBy = "Score"
)

// ClusterPredicate is one rule selecting clusters.
type ClusterPredicate struct {
	// requiredClusterSelector selects clusters by labels, claims and CEL
	// expressions. A selected cluster that stops matching is eventually removed
	// from the decisions; a cluster that starts matching may be added.
	// +optional
	RequiredClusterSelector ClusterSelector `json:"requiredClusterSelector,omitempty"`
}

// ClusterSelector selects the clusters matched by all of its selectors. An
// empty selector matches every cluster.
type ClusterSelector struct {
	// labelSelector selects clusters by their labels.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// claimSelector selects clusters by the claims in their status.clusterClaims.
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`

	// celSelector selects clusters by CEL expressions over the ManagedCluster.
	// +optional
	CelSelector ClusterCelSelector `json:"celSelector,omitempty"`
}

// ClusterClaimSelector selects clusters by their collected cluster claims,
// with the semantics of a label selector's matchExpressions.
type ClusterClaimSelector struct {
	// matchExpressions are requirements on claim names and values; all must match.
	// +optional
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterCelSelector selects clusters with CEL expressions, all of which must
// evaluate to true. An expression sees the cluster as the variable
// managedCluster, and managedCluster.scores("<AddOnPlacementScore name>")
// returns the cluster's add-on scores.
type ClusterCelSelector struct {
	// celExpressions are the CEL expressions; all must evaluate to true.
	// +optional
	CelExpressions []string `json:"celExpressions,omitempty"`
}

// PlacementStatus is the observed state of a Placement.
type PlacementStatus struct {
	// numberOfSelectedClusters is how many clusters were selected.
	// +optional
	NumberOfSelectedClusters int32 `json:"numberOfSelectedClusters"`

	// decisionGroups describe the decision groups of the selected clusters.
	// +optional
	DecisionGroups []DecisionGroupStatus `json:"decisionGroups"`

	// conditions report the outcome of scheduling: types PlacementSatisfied
	// and PlacementMisconfigured.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions"`

	// lastScoreUpdateTime is when the scores used by the last scheduling run
	// were updated.
	// +optional
	LastScoreUpdateTime *metav1.Time `json:"lastScoreUpdateTime,omitempty"`
}

// DecisionGroupStatus describes one decision group of a Placement.
type DecisionGroupStatus struct {
	// decisionGroupIndex is the index of the group. Without a decision
	// strategy every decision is in group 0.
	// +optional
	DecisionGroupIndex int32 `json:"decisionGroupIndex"`

	// decisionGroupName is the name of the group from
	// spec.decisionStrategy.groupStrategy.decisionGroups, empty for the groups
	// of the remaining clusters.
	// +optional
	DecisionGroupName string `json:"decisionGroupName"`

	// decisions are the names of the PlacementDecisions of the group.
	// +optional
	Decisions []string `json:"decisions"`

	// clusterCount is the number of clusters in the group, at most
	// clustersPerDecisionGroup.
	// +optional
	// +kubebuilder:default=0
	ClustersCount int32 `json:"clusterCount"`
}

// PlacementList is a list of Placements.
//
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Placements.
	Items []Placement `json:"items"`
}
