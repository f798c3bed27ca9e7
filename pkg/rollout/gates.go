package rollout

import (
	"errors"
	"fmt"
	"strconv"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
)

// GateType says when a gate of a stage holds the rollout
// (rolloutv1alpha1.GateBefore or GateAfter).
type GateType = rolloutv1alpha1.GateType

// The gate types.
const (
	GateBefore = rolloutv1alpha1.GateBefore
	GateAfter  = rolloutv1alpha1.GateAfter
)

// GateState is where one gate of a stage stands.
type GateState string

const (
	// GateNone means the stage has no such gate.
	GateNone GateState = ""
	// GateApproved means the gate was approved.
	GateApproved GateState = "Approved"
	// GateWaiting means the rollout waits at this gate now.
	GateWaiting GateState = "Waiting"
	// GateClosed means the gate is not approved and the rollout has not
	// reached it yet.
	GateClosed GateState = "Closed"
)

// Gates cut a Progressive or ProgressivePerGroup rollout into stages run one
// after the other, and hold it at their boundaries until approved.
type Gates struct {
	// Before holds each stage until it is approved.
	Before bool
	// After holds the stage after each one, and the completion of the
	// rollout after the last, until the finished stage is approved.
	After bool
	// StageSize cuts a Progressive rollout into stages of this many
	// clusters (in rollout order); 0 makes each decision group a stage.
	StageSize int
	// Approved reports whether the gate of the named stage is approved.
	Approved func(stage string, gate GateType) bool
}

// Stage is one stage of a rollout in a Result.
type Stage struct {
	// Name is the decision group's name, "group-<index>" for a group
	// without one, or "batch-<n>" for the n-th stage of StageSize clusters.
	Name string
	// Clusters are the stage's clusters in rollout order.
	Clusters []Cluster
	// Before and After are the states of the stage's gates.
	Before, After GateState
}

// Gate names one gate of one stage.
type Gate struct {
	Stage string
	Type  GateType
}

// String reads "before stage canary" or "after stage canary".
func (g Gate) String() string {
	if g.Type == GateAfter {
		return "after stage " + g.Stage
	}
	return "before stage " + g.Stage
}

// ErrGatesNeedStages is returned for gates or a stage size on a strategy
// that starts every cluster at once.
var ErrGatesNeedStages = errors.New("rollout gates need a Progressive or ProgressivePerGroup rollout strategy")

// stage is a stage being computed: its entries point into Compute's groups.
type stage struct {
	name    string
	entries []*entry
}

// GroupStageName is the name of the stage of a decision group.
func GroupStageName(g Group) string {
	if g.Name != "" {
		return g.Name
	}
	return "group-" + strconv.Itoa(int(g.Index))
}

// buildStages cuts the entries into stages in rollout order: the mandatory
// decision groups first, then the others by index; one stage per group, or
// stages of size clusters.
func buildStages(groups []Group, all [][]entry, mandatory []clusterv1alpha1.MandatoryDecisionGroup, size int) []*stage {
	isMandatory := func(g Group) bool {
		for _, m := range mandatory {
			if (m.GroupName != "" && m.GroupName == g.Name) || (m.GroupName == "" && m.GroupIndex == g.Index) {
				return true
			}
		}
		return false
	}
	var order []int
	for i, g := range groups {
		if isMandatory(g) {
			order = append(order, i)
		}
	}
	for i, g := range groups {
		if !isMandatory(g) {
			order = append(order, i)
		}
	}
	var stages []*stage
	for _, i := range order {
		if size > 0 {
			for j := range all[i] {
				if len(stages) == 0 || len(stages[len(stages)-1].entries) == size {
					stages = append(stages, &stage{name: "batch-" + strconv.Itoa(len(stages)+1)})
				}
				last := stages[len(stages)-1]
				last.entries = append(last.entries, &all[i][j])
			}
			continue
		}
		st := &stage{name: GroupStageName(groups[i])}
		for j := range all[i] {
			st.entries = append(st.entries, &all[i][j])
		}
		stages = append(stages, st)
	}
	return stages
}

// pending reports whether a cluster of the stage waits to start.
func (s *stage) pending() bool {
	for _, e := range s.entries {
		if e.pending {
			return true
		}
	}
	return false
}

// finished reports whether no cluster of the stage waits or is in the
// rollout window (failures past their deadline do not hold it).
func (s *stage) finished() bool {
	for _, e := range s.entries {
		if e.pending || e.active {
			return false
		}
	}
	return true
}

// hold keeps the stage's waiting clusters from starting.
func (s *stage) hold() {
	for _, e := range s.entries {
		if e.pending {
			e.pending, e.held = false, true
		}
	}
}

// checkGates validates g against the strategy type.
func checkGates(g *Gates, typ clusterv1alpha1.RolloutType) error {
	if g == nil || (!g.Before && !g.After && g.StageSize == 0) {
		return nil
	}
	switch typ {
	case clusterv1alpha1.Progressive:
	case clusterv1alpha1.ProgressivePerGroup:
		if g.StageSize > 0 {
			return fmt.Errorf("a stage size cuts a Progressive rollout; a ProgressivePerGroup rollout has one stage per decision group")
		}
	default:
		return ErrGatesNeedStages
	}
	if g.StageSize < 0 {
		return fmt.Errorf("stage size %d: must be a positive number of clusters", g.StageSize)
	}
	return nil
}

// applyGates runs the stages one after the other and holds the clusters of
// every stage the rollout may not start yet: a stage starts once every stage
// before it finished and its gates (After of the stage before, Before of its
// own) are approved. It returns the gate the rollout waits at, if any. With
// hold, every waiting cluster is held (a paused or aborted rollout).
func applyGates(stages []*stage, g *Gates, hold bool) *Gate {
	if hold {
		for _, s := range stages {
			s.hold()
		}
		return nil
	}
	if g == nil || (!g.Before && !g.After) {
		return nil
	}
	approved := func(stage string, t GateType) bool { return g.Approved != nil && g.Approved(stage, t) }
	open := true
	var waiting *Gate
	for k, s := range stages {
		if open && s.pending() {
			switch {
			case g.After && k > 0 && !approved(stages[k-1].name, GateAfter):
				waiting = &Gate{Stage: stages[k-1].name, Type: GateAfter}
			case g.Before && !approved(s.name, GateBefore):
				waiting = &Gate{Stage: s.name, Type: GateBefore}
			}
			open = waiting == nil
		}
		if !open {
			s.hold()
			continue
		}
		open = s.finished()
	}
	if open && g.After && len(stages) > 0 {
		if last := stages[len(stages)-1].name; !approved(last, GateAfter) {
			waiting = &Gate{Stage: last, Type: GateAfter}
		}
	}
	return waiting
}

// stageResults reports the stages with their clusters and gate states.
func stageResults(stages []*stage, g *Gates, waiting *Gate) []Stage {
	state := func(name string, t GateType, on bool) GateState {
		switch {
		case !on:
			return GateNone
		case waiting != nil && *waiting == (Gate{Stage: name, Type: t}):
			return GateWaiting
		case g.Approved != nil && g.Approved(name, t):
			return GateApproved
		default:
			return GateClosed
		}
	}
	out := make([]Stage, 0, len(stages))
	for _, s := range stages {
		st := Stage{Name: s.name, Clusters: make([]Cluster, 0, len(s.entries))}
		for _, e := range s.entries {
			st.Clusters = append(st.Clusters, e.Cluster)
		}
		if g != nil {
			st.Before, st.After = state(s.name, GateBefore, g.Before), state(s.name, GateAfter, g.After)
		}
		out = append(out, st)
	}
	return out
}

// Controlled returns in under the rollout control p of the rollout of
// revision number rev (hash hash) of ManifestWorkReplicaSet set for its
// placementRef placement: its gates, opened by approvals (of any set and
// revision: those of others are ignored), and Hold when the rollout is
// paused or aborted at this revision. The rollback of an aborted rollout
// (p.Ungated is hash) passes every gate and starts every changed cluster at
// once (strategy All, keeping the strategy's progressDeadline).
func Controlled(in Input, p rolloutv1alpha1.Policy, set, placement string, rev int64, hash string, approvals []rolloutv1alpha1.RolloutApproval) Input {
	in.Hold = in.Hold || p.Paused || (p.Aborted != 0 && p.Aborted == rev)
	if p.Ungated != "" && p.Ungated == hash {
		deadline := ""
		if cfg := strategyConfig(in.Strategy); cfg != nil {
			deadline = cfg.ProgressDeadline
		}
		in.Strategy = clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All,
			All: &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: deadline}}}
		return in
	}
	if !p.Gated() && p.StageSize == 0 {
		return in
	}
	g := &Gates{StageSize: p.StageSize, Before: p.Before, After: p.After}
	open := map[Gate]bool{}
	for i := range approvals {
		s := &approvals[i].Spec
		if approvals[i].DeletionTimestamp.IsZero() && s.ManifestWorkReplicaSet == set && s.Revision == rev && s.Placement == placement {
			open[Gate{Stage: s.Stage, Type: s.Gate}] = true
		}
	}
	g.Approved = func(stage string, t GateType) bool { return open[Gate{Stage: stage, Type: t}] }
	in.Gates = g
	return in
}
