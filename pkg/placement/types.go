package placement

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// Input is everything one scheduling run of one Placement reads. The caller
// lists the objects (from a cache or the API); Schedule never mutates them.
type Input struct {
	// Placement is the placement being scheduled.
	Placement *clusterv1beta1.Placement
	// Clusters are the hub's ManagedClusters (all of them, or at least the
	// members of the sets bound to the placement's namespace).
	Clusters []*clusterv1.ManagedCluster
	// ClusterSets are the hub's ManagedClusterSets.
	ClusterSets []*clusterv1beta2.ManagedClusterSet
	// Bindings are the ManagedClusterSetBindings in the placement's namespace.
	Bindings []*clusterv1beta2.ManagedClusterSetBinding
	// Scores are the AddOnPlacementScores of the candidate clusters (each in
	// its cluster's namespace).
	Scores []*clusterv1alpha1.AddOnPlacementScore
	// Decided are the clusters this placement's current PlacementDecisions
	// name (used by Steady and NoSelectIfNew).
	Decided []string
	// OtherDecisions counts, per cluster, how many other placements currently
	// decide it (used by Balance).
	OtherDecisions map[string]int
	// Now is the scheduling time (toleration and score expiry).
	Now time.Time
}

// Result is the outcome of one scheduling run.
type Result struct {
	// Groups are the decision groups in order; every selected cluster is in
	// exactly one. There is always at least one group, possibly empty.
	Groups []Group
	// Clusters explains every cluster that was looked at, sorted by name.
	Clusters []Explanation
	// Selected is the number of selected clusters.
	Selected int
	// Satisfied is the PlacementSatisfied condition to set (type, status,
	// reason and message; the caller sets ObservedGeneration).
	Satisfied metav1.Condition
	// Misconfigured is the PlacementMisconfigured condition to set.
	Misconfigured metav1.Condition
	// RequeueAfter, when non-zero, is when the result changes by itself (a
	// toleration or an add-on score expires) and scheduling must run again.
	RequeueAfter time.Duration
}

// Group is one decision group of the selected clusters.
type Group struct {
	// Index is the group's decisionGroupIndex.
	Index int32
	// Name is the decisionGroupName; empty for groups of the remaining clusters.
	Name string
	// Decisions are the group's clusters in decision order.
	Decisions []clusterv1beta1.ClusterDecision
}

// Stage names the step of scheduling that decided a cluster's fate.
type Stage string

// Explanation says why one cluster was or was not selected.
type Explanation struct {
	// Cluster is the cluster's name.
	Cluster string
	// Selected reports whether the cluster is in the decisions.
	Selected bool
	// Stage is the step that excluded the cluster (StageClusterSet to
	// StageRank), or StageSelected.
	Stage Stage
	// Reason is a human-readable sentence naming the predicate, taint,
	// spread constraint or rank that decided.
	Reason string
	// Scores are the cluster's raw score per prioritizer (keyed like
	// "BuiltIn:Balance" or "AddOn:<resource>:<score>", see ScoreKeyBuiltIn
	// and ScoreKeyAddOn), for clusters that reached scoring; prioritizers of
	// weight 0 are not listed.
	Scores map[string]int64
	// Total is the weighted sum of Scores.
	Total int64
}

// The stages of scheduling, in the order they run. An Explanation's Stage is
// the stage that excluded the cluster, or StageSelected.
const (
	// StageClusterSet excludes clusters that are not members of a
	// ManagedClusterSet bound to the placement's namespace and named by
	// spec.clusterSets (when set).
	StageClusterSet Stage = "ClusterSet"
	// StageDeleting excludes clusters that are being deleted.
	StageDeleting Stage = "Deleting"
	// StageMisconfigured excludes every candidate because the placement is
	// misconfigured (a selector, toleration or prioritizer is invalid).
	StageMisconfigured Stage = "Misconfigured"
	// StagePredicate excludes clusters that match none of spec.predicates.
	StagePredicate Stage = "Predicate"
	// StageTaint excludes clusters with a taint the placement does not tolerate.
	StageTaint Stage = "Taint"
	// StageSpread excludes clusters a DoNotSchedule spread constraint rejects.
	StageSpread Stage = "Spread"
	// StageRank excludes scored clusters that rank below spec.numberOfClusters.
	StageRank Stage = "Rank"
	// StageSelected marks the selected clusters.
	StageSelected Stage = "Selected"
)
