package rollout

import (
	"time"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// State is where one cluster stands in a rollout.
type State string

const (
	// ToApply means the cluster does not have the desired version yet.
	ToApply State = "ToApply"
	// Progressing means the desired version was applied and has not succeeded yet.
	Progressing State = "Progressing"
	// Succeeded means the desired version was applied and succeeded.
	Succeeded State = "Succeeded"
	// Failed means the desired version was applied and failed.
	Failed State = "Failed"
	// TimeOut means the cluster stayed Progressing or Failed longer than
	// progressDeadline. It counts as a failure.
	TimeOut State = "TimeOut"
	// Skip means the cluster takes no part in the rollout.
	Skip State = "Skip"
)

// ClusterState is the state of one cluster and when it last changed.
type ClusterState struct {
	// State is the cluster's state.
	State State
	// Since is the time of the last state change. It starts the progress
	// deadline of Progressing and Failed clusters and the minimum success
	// time of Succeeded ones; the zero time counts as "now".
	Since time.Time
}

// Group is one decision group of a placement.
type Group struct {
	// Index is the group's decision-group-index.
	Index int32
	// Name is the group's decision-group-name; may be empty.
	Name string
	// Clusters are the group's clusters.
	Clusters []string
}

// Input is everything a rollout decision depends on.
type Input struct {
	// Strategy is the rollout strategy; an empty type means All.
	Strategy clusterv1alpha1.RolloutStrategy
	// Groups are the placement's decision groups. They are rolled out in
	// index order; clusters within a group in name order.
	Groups []Group
	// States are the clusters' states by name; a cluster that is missing
	// is ToApply.
	States map[string]ClusterState
	// Now is the current time.
	Now time.Time
	// Gates, when set, run the rollout in stages held at their gates until
	// approved (Progressive and ProgressivePerGroup only).
	Gates *Gates
	// Hold keeps every cluster that waits to start from starting: the
	// rollout is paused or aborted. Clusters already started are kept.
	Hold bool
}

// Cluster is one cluster in a rollout result.
type Cluster struct {
	// Name is the cluster's name.
	Name string
	// GroupIndex and GroupName identify the cluster's decision group.
	GroupIndex int32
	// GroupName is the name of the cluster's decision group.
	GroupName string
	// State is the cluster's state, TimeOut when the progress deadline passed.
	State State
	// Since is the time of the cluster's last state change.
	Since time.Time
}

// Result is what a rollout decided.
type Result struct {
	// ToApply are the clusters that must have the desired version now: the
	// clusters in the rollout window (ToApply ones to update, Progressing and
	// Failed ones to keep current, Succeeded ones still within
	// minSuccessTime). Clusters not listed keep what they have.
	ToApply []Cluster
	// TimedOut are the clusters whose progress deadline passed.
	TimedOut []Cluster
	// RequeueAfter is when the result changes by the clock alone (a
	// minSuccessTime or progressDeadline running out); zero when it does not.
	RequeueAfter time.Duration
	// MaxFailuresBreached reports that failures and time-outs exceed
	// maxFailures (or a mandatory decision group failed), so no further
	// clusters are started.
	MaxFailuresBreached bool
	// Complete reports that every cluster is done: Succeeded past
	// minSuccessTime, or skipped, and no gate waits. Time-outs leave a
	// rollout incomplete.
	Complete bool
	// Stages are the rollout's stages in order: one per decision group (the
	// mandatory ones first), or of Gates.StageSize clusters.
	Stages []Stage
	// Waiting is the gate the rollout waits at, nil when none.
	Waiting *Gate
	// Held counts the clusters that wait to start but may not: held at a
	// gate, or by Hold.
	Held int
}

// Pending returns the clusters of r.ToApply whose state is ToApply: those
// to create or update now.
func (r Result) Pending() []Cluster {
	var out []Cluster
	for _, c := range r.ToApply {
		if c.State == ToApply {
			out = append(out, c)
		}
	}
	return out
}
