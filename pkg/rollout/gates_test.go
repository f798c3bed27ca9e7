package rollout

import (
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
)

// approvals builds a Gates.Approved from "stage/Before" style keys.
func approvals(keys ...string) func(string, GateType) bool {
	return func(stage string, g GateType) bool { return slices.Contains(keys, stage+"/"+string(g)) }
}

func TestComputeGates(t *testing.T) {
	canary := []Group{{Index: 0, Name: "canary", Clusters: []string{"a"}}, {Index: 1, Clusters: []string{"b", "c"}}}
	done := func(names ...string) map[string]ClusterState {
		m := map[string]ClusterState{}
		for _, n := range names {
			m[n] = st(Succeeded, time.Hour)
		}
		return m
	}
	tests := []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
		groups   []Group
		states   map[string]ClusterState
		gates    *Gates
		hold     bool

		pending  []string
		waiting  *Gate
		held     int
		complete bool
		stages   []string
	}{
		{name: "before gate holds the first stage", strategy: perGroup(i0, 0, "None"), groups: canary,
			gates:   &Gates{Before: true},
			pending: nil, waiting: &Gate{Stage: "canary", Type: GateBefore}, held: 3, stages: []string{"canary", "group-1"}},
		{name: "approved first stage starts, the next waits for it to finish", strategy: perGroup(i0, 0, "None"), groups: canary,
			gates:   &Gates{Before: true, Approved: approvals("canary/Before")},
			pending: []string{"a"}, held: 2},
		{name: "finished stage: the next stage's before gate waits", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a"), gates: &Gates{Before: true, Approved: approvals("canary/Before")},
			waiting: &Gate{Stage: "group-1", Type: GateBefore}, held: 2},
		{name: "soaking stage holds the next without a waiting gate", strategy: perGroup(i0, time.Hour, "None"), groups: canary,
			states: map[string]ClusterState{"a": st(Succeeded, time.Minute)}, gates: &Gates{Before: true, Approved: approvals("canary/Before")},
			held: 2},
		{name: "after gate of the finished stage waits", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a"), gates: &Gates{After: true},
			waiting: &Gate{Stage: "canary", Type: GateAfter}, held: 2},
		{name: "approved after gate starts the next stage", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a"), gates: &Gates{After: true, Approved: approvals("canary/After")},
			pending: []string{"b", "c"}},
		{name: "after gate of the last stage holds completion", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a", "b", "c"), gates: &Gates{After: true, Approved: approvals("canary/After")},
			waiting: &Gate{Stage: "group-1", Type: GateAfter}},
		{name: "every gate approved: complete", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a", "b", "c"), gates: &Gates{Before: true, After: true,
				Approved: approvals("canary/Before", "canary/After", "group-1/Before", "group-1/After")},
			complete: true},
		{name: "a stage with nothing to start needs no before approval", strategy: perGroup(i0, 0, "None"), groups: canary,
			states: done("a"), gates: &Gates{Before: true, Approved: approvals("group-1/Before")},
			pending: []string{"b", "c"}},
		{name: "stage size cuts a progressive rollout into batches", strategy: progressive(i1, i0, 0, "None"),
			groups: groups([]string{"a", "b", "c"}, []string{"d", "e"}), states: done("a", "b"),
			gates:   &Gates{Before: true, StageSize: 2, Approved: approvals("batch-1/Before")},
			waiting: &Gate{Stage: "batch-2", Type: GateBefore}, held: 3, stages: []string{"batch-1", "batch-2", "batch-3"}},
		{name: "maxConcurrency applies within a stage", strategy: progressive(i1, i0, 0, "None"),
			groups:  groups([]string{"a", "b", "c"}, []string{"d", "e"}),
			gates:   &Gates{Before: true, StageSize: 2, Approved: approvals("batch-1/Before", "batch-2/Before")},
			pending: []string{"a"}, held: 3},
		{name: "mandatory groups are the first stages", strategy: progressive(i2, i0, 0, "None", clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			groups: groups([]string{"a"}, []string{"b"}), gates: &Gates{Before: true},
			waiting: &Gate{Stage: "group-1", Type: GateBefore}, held: 2, stages: []string{"group-1", "group-0"}},
		{name: "hold starts nothing and keeps what runs", strategy: progressive(i2, i0, 0, "None"),
			groups: groups([]string{"a", "b", "c"}), states: map[string]ClusterState{"a": st(Progressing, 0)}, hold: true,
			pending: nil, held: 2},
		{name: "hold works without gates on All", groups: groups([]string{"a", "b"}), hold: true, held: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compute(Input{Strategy: tt.strategy, Groups: tt.groups, States: tt.states, Now: now, Gates: tt.gates, Hold: tt.hold})
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			if got := names(r.Pending()); !slices.Equal(got, append([]string{}, tt.pending...)) {
				t.Errorf("Pending = %v, want %v", got, tt.pending)
			}
			switch {
			case (r.Waiting == nil) != (tt.waiting == nil):
				t.Errorf("Waiting = %v, want %v", r.Waiting, tt.waiting)
			case r.Waiting != nil && *r.Waiting != *tt.waiting:
				t.Errorf("Waiting = %v, want %v", *r.Waiting, *tt.waiting)
			}
			if r.Held != tt.held {
				t.Errorf("Held = %d, want %d", r.Held, tt.held)
			}
			if r.Complete != tt.complete {
				t.Errorf("Complete = %v, want %v", r.Complete, tt.complete)
			}
			if tt.stages != nil {
				var got []string
				for _, s := range r.Stages {
					got = append(got, s.Name)
				}
				if !slices.Equal(got, tt.stages) {
					t.Errorf("Stages = %v, want %v", got, tt.stages)
				}
			}
		})
	}
}

func TestComputeGateStates(t *testing.T) {
	r, err := Compute(Input{Strategy: perGroup(i0, 0, "None"), Now: now,
		Groups: []Group{{Index: 0, Name: "canary", Clusters: []string{"a"}}, {Index: 1, Name: "prod", Clusters: []string{"b"}}},
		States: map[string]ClusterState{"a": st(Succeeded, time.Hour)},
		Gates:  &Gates{Before: true, After: true, Approved: approvals("canary/Before")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Name: "canary", Before: GateApproved, After: GateWaiting},
		{Name: "prod", Before: GateClosed, After: GateClosed},
	}
	for i, s := range r.Stages {
		if s.Name != want[i].Name || s.Before != want[i].Before || s.After != want[i].After {
			t.Errorf("stage %d = %s before=%s after=%s, want %+v", i, s.Name, s.Before, s.After, want[i])
		}
	}
	if len(r.Stages) != 2 || len(r.Stages[1].Clusters) != 1 || r.Stages[1].Clusters[0].State != ToApply {
		t.Errorf("stages = %+v, want prod holding b ToApply", r.Stages)
	}
}

func TestComputeGateErrors(t *testing.T) {
	one := groups([]string{"a"})
	if _, err := Compute(Input{Strategy: all("None"), Groups: one, Now: now, Gates: &Gates{Before: true}}); !errors.Is(err, ErrGatesNeedStages) {
		t.Errorf("gates on All: err = %v, want ErrGatesNeedStages", err)
	}
	if _, err := Compute(Input{Strategy: perGroup(i0, 0, "None"), Groups: one, Now: now, Gates: &Gates{StageSize: 2}}); err == nil {
		t.Error("stage size on ProgressivePerGroup: no error")
	}
	if _, err := Compute(Input{Strategy: progressive(intstr.FromInt32(1), i0, 0, "None"), Groups: one, Now: now, Gates: &Gates{StageSize: -1}}); err == nil {
		t.Error("negative stage size: no error")
	}
}

func TestControlled(t *testing.T) {
	approval := func(set string, rev int64, placement, stage string, g GateType) rolloutv1alpha1.RolloutApproval {
		return rolloutv1alpha1.RolloutApproval{Spec: rolloutv1alpha1.RolloutApprovalSpec{
			ManifestWorkReplicaSet: set, Revision: rev, Placement: placement, Stage: stage, Gate: g}}
	}
	approvals := []rolloutv1alpha1.RolloutApproval{
		approval("web", 2, "p", "canary", GateBefore),
		approval("web", 1, "p", "prod", GateBefore), // another revision
		approval("web", 2, "q", "prod", GateBefore), // another placement
		approval("api", 2, "p", "prod", GateBefore), // another set
		approval("web", 2, "p", "prod", GateAfter),  // the After gate
	}
	base := Input{Strategy: perGroup(i0, 0, "5m")}
	gated := rolloutv1alpha1.Policy{Before: true, After: true}

	in := Controlled(base, gated, "web", "p", 2, "h2", approvals)
	if in.Gates == nil || !in.Gates.Before || !in.Gates.After || in.Hold {
		t.Fatalf("gated: %+v", in)
	}
	for _, c := range []struct {
		stage string
		g     GateType
		want  bool
	}{{"canary", GateBefore, true}, {"prod", GateBefore, false}, {"prod", GateAfter, true}, {"canary", GateAfter, false}} {
		if got := in.Gates.Approved(c.stage, c.g); got != c.want {
			t.Errorf("Approved(%s, %s) = %v, want %v", c.stage, c.g, got, c.want)
		}
	}
	if in := Controlled(base, rolloutv1alpha1.Policy{}, "web", "p", 2, "h2", approvals); in.Gates != nil || in.Hold {
		t.Errorf("no policy: %+v, want the input unchanged", in)
	}
	if in := Controlled(base, rolloutv1alpha1.Policy{Paused: true}, "web", "p", 2, "h2", nil); !in.Hold {
		t.Error("paused: not held")
	}
	if in := Controlled(base, rolloutv1alpha1.Policy{Aborted: 2}, "web", "p", 2, "h2", nil); !in.Hold {
		t.Error("aborted at the current revision: not held")
	}
	if in := Controlled(base, rolloutv1alpha1.Policy{Aborted: 1}, "web", "p", 2, "h2", nil); in.Hold {
		t.Error("aborted at an earlier revision: held")
	}
	rollback := gated
	rollback.Ungated = "h2"
	in = Controlled(base, rollback, "web", "p", 2, "h2", nil)
	if in.Gates != nil || in.Strategy.Type != clusterv1alpha1.All || in.Strategy.All == nil || in.Strategy.All.ProgressDeadline != "5m" {
		t.Errorf("ungated: gates %v, strategy %+v; want none, All with progressDeadline 5m", in.Gates, in.Strategy)
	}
}
