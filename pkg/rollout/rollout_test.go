package rollout

import (
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// ago returns the time d before now.
func ago(d time.Duration) time.Time { return now.Add(-d) }

// st builds a ClusterState that changed d ago.
func st(s State, d time.Duration) ClusterState { return ClusterState{State: s, Since: ago(d)} }

// groups builds unnamed decision groups 0..n-1 from cluster lists.
func groups(lists ...[]string) []Group {
	out := make([]Group, len(lists))
	for i, l := range lists {
		out[i] = Group{Index: int32(i), Clusters: l}
	}
	return out
}

func all(deadline string) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All,
		All: &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: deadline}}}
}

func progressive(maxConcurrency, maxFailures intstr.IntOrString, minSuccess time.Duration, deadline string, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		RolloutConfig:           config(maxFailures, minSuccess, deadline),
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory},
		MaxConcurrency:          maxConcurrency,
	}}
}

func perGroup(maxFailures intstr.IntOrString, minSuccess time.Duration, deadline string, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
		RolloutConfig:           config(maxFailures, minSuccess, deadline),
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory},
	}}
}

func config(maxFailures intstr.IntOrString, minSuccess time.Duration, deadline string) clusterv1alpha1.RolloutConfig {
	return clusterv1alpha1.RolloutConfig{MaxFailures: maxFailures, MinSuccessTime: metav1.Duration{Duration: minSuccess}, ProgressDeadline: deadline}
}

var (
	i0  = intstr.FromInt32(0)
	i1  = intstr.FromInt32(1)
	i2  = intstr.FromInt32(2)
	p50 = intstr.FromString("50%")
)

// names returns the sorted names of cs.
func names(cs []Cluster) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

func TestCompute(t *testing.T) {
	abcd := groups([]string{"a", "b"}, []string{"c", "d"})
	tests := []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
		groups   []Group
		states   map[string]ClusterState

		apply, pending, timedOut []string
		requeue                  time.Duration
		breached, complete       bool
	}{
		{name: "empty type means All: everything at once", groups: abcd,
			apply: []string{"a", "b", "c", "d"}, pending: []string{"a", "b", "c", "d"}},
		{name: "All without deadline keeps waiting", strategy: all("None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, time.Hour), "b": st(Succeeded, 0), "c": st(Succeeded, 0), "d": st(Succeeded, 0)},
			apply:  []string{"a"}, pending: []string{}},
		{name: "All deadline turns long progressing into TimeOut", strategy: all("10m"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, 11*time.Minute), "b": st(Progressing, 4*time.Minute), "c": st(Succeeded, 0), "d": st(Succeeded, 0)},
			apply:  []string{"b"}, pending: []string{}, timedOut: []string{"a"}, requeue: 6 * time.Minute},
		{name: "All ignores minSuccessTime and maxFailures", strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All, All: &clusterv1alpha1.RolloutAll{RolloutConfig: config(i0, time.Hour, "None")}},
			groups: abcd, states: map[string]ClusterState{"a": st(Failed, 0), "b": st(Succeeded, 0)},
			apply: []string{"a", "c", "d"}, pending: []string{"c", "d"}},
		{name: "All complete", strategy: all("None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 0), "b": st(Succeeded, 0), "c": st(Skip, 0), "d": st(Succeeded, 0)},
			apply:  []string{}, pending: []string{}, complete: true},
		{name: "Progressive starts maxConcurrency clusters in group order", strategy: progressive(i1, i0, 0, "None"),
			groups: []Group{{Index: 1, Clusters: []string{"a"}}, {Index: 0, Clusters: []string{"z", "y"}}},
			apply:  []string{"y"}, pending: []string{"y"}},
		{name: "Progressive waits for the progressing cluster", strategy: progressive(i1, i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, time.Minute)},
			apply:  []string{"a"}, pending: []string{}},
		{name: "Progressive moves on when a cluster succeeded", strategy: progressive(i1, i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 0)},
			apply:  []string{"b"}, pending: []string{"b"}},
		{name: "Progressive percentage rounds up", strategy: progressive(intstr.FromString("25%"), i0, 0, "None"),
			groups: groups([]string{"a", "b", "c", "d", "e"}),
			apply:  []string{"a", "b"}, pending: []string{"a", "b"}},
		{name: "Progressive unset maxConcurrency means all", strategy: progressive(intstr.IntOrString{}, i0, 0, "None"), groups: abcd,
			apply: []string{"a", "b", "c", "d"}, pending: []string{"a", "b", "c", "d"}},
		{name: "Progressive minSuccessTime holds the slot", strategy: progressive(i1, i0, 5*time.Minute, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 2*time.Minute)},
			apply:  []string{"a"}, pending: []string{}, requeue: 3 * time.Minute},
		{name: "Progressive minSuccessTime passed frees the slot", strategy: progressive(i1, i0, 5*time.Minute, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 6*time.Minute)},
			apply:  []string{"b"}, pending: []string{"b"}},
		{name: "Progressive failure beyond maxFailures stops", strategy: progressive(i2, i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Failed, 0), "b": st(Succeeded, 0)},
			apply:  []string{"a"}, pending: []string{}, breached: true},
		{name: "Progressive failure within maxFailures goes on", strategy: progressive(i2, i1, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Failed, 0), "b": st(Succeeded, 0)},
			apply:  []string{"a", "c"}, pending: []string{"c"}},
		{name: "Progressive time-out counts as failure and frees the slot", strategy: progressive(i1, intstr.FromString("25%"), 0, "1m"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, 2*time.Minute)},
			apply:  []string{"b"}, pending: []string{"b"}, timedOut: []string{"a"}},
		{name: "Progressive time-outs beyond maxFailures stop", strategy: progressive(i1, i1, 0, "1m"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, 2*time.Minute), "b": st(Failed, 3*time.Minute)},
			apply:  []string{}, pending: []string{}, timedOut: []string{"a", "b"}, breached: true},
		{name: "Progressive deadline requeues at expiry", strategy: progressive(i1, i0, 0, "10m"), groups: abcd,
			states: map[string]ClusterState{"a": st(Progressing, 4*time.Minute)},
			apply:  []string{"a"}, pending: []string{}, requeue: 6 * time.Minute},
		{name: "Progressive mandatory group first, whatever maxConcurrency", strategy: progressive(i1, i0, 0, "None", clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
			groups: []Group{{Index: 0, Clusters: []string{"a", "b"}}, {Index: 1, Name: "canary", Clusters: []string{"c", "d"}}},
			apply:  []string{"c", "d"}, pending: []string{"c", "d"}},
		{name: "Progressive mandatory group by index tolerates no failure", strategy: progressive(i2, i2, 0, "None", clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			groups: abcd, states: map[string]ClusterState{"c": st(Failed, 0), "d": st(Succeeded, 0)},
			apply: []string{"c"}, pending: []string{}, breached: true},
		{name: "Progressive after mandatory groups", strategy: progressive(p50, i0, 0, "None", clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			groups: groups([]string{"a", "b", "e", "f"}, []string{"c", "d"}), states: map[string]ClusterState{"c": st(Succeeded, 0), "d": st(Succeeded, 0)},
			apply: []string{"a", "b"}, pending: []string{"a", "b"}},
		{name: "Progressive mandatory groups one at a time", strategy: progressive(i1, i0, 0, "None",
			clusterv1alpha1.MandatoryDecisionGroup{GroupName: "west"}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "east"}),
			groups: []Group{{Index: 0, Name: "west", Clusters: []string{"a"}}, {Index: 1, Name: "east", Clusters: []string{"b"}}, {Index: 2, Clusters: []string{"c"}}},
			apply:  []string{"a"}, pending: []string{"a"}},
		{name: "ProgressivePerGroup first group whole", strategy: perGroup(i0, 0, "None"), groups: abcd,
			apply: []string{"a", "b"}, pending: []string{"a", "b"}},
		{name: "ProgressivePerGroup waits for the group", strategy: perGroup(i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 0), "b": st(Progressing, 0)},
			apply:  []string{"b"}, pending: []string{}},
		{name: "ProgressivePerGroup next group when done", strategy: perGroup(i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 0), "b": st(Succeeded, 0)},
			apply:  []string{"c", "d"}, pending: []string{"c", "d"}},
		{name: "ProgressivePerGroup soak holds the group", strategy: perGroup(i0, time.Minute, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, 2*time.Minute), "b": st(Succeeded, 30*time.Second)},
			apply:  []string{"b"}, pending: []string{}, requeue: 30 * time.Second},
		{name: "ProgressivePerGroup failure beyond group maxFailures stops", strategy: perGroup(i0, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Failed, 0), "b": st(Succeeded, 0)},
			apply:  []string{"a"}, pending: []string{}, breached: true},
		{name: "ProgressivePerGroup failure within group maxFailures moves on", strategy: perGroup(p50, 0, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Failed, 0), "b": st(Succeeded, 0)},
			apply:  []string{"a", "c", "d"}, pending: []string{"c", "d"}},
		{name: "ProgressivePerGroup mandatory group first", strategy: perGroup(i0, 0, "None", clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			groups: abcd, apply: []string{"c", "d"}, pending: []string{"c", "d"}},
		{name: "ProgressivePerGroup mandatory time-out blocks", strategy: perGroup(i2, 0, "1m", clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			groups: abcd, states: map[string]ClusterState{"c": st(Progressing, 2*time.Minute), "d": st(Succeeded, 0)},
			apply: []string{}, pending: []string{}, timedOut: []string{"c"}, breached: true},
		{name: "ProgressivePerGroup complete", strategy: perGroup(i0, time.Minute, "None"), groups: abcd,
			states: map[string]ClusterState{"a": st(Succeeded, time.Hour), "b": st(Succeeded, time.Hour), "c": st(Succeeded, time.Hour), "d": st(Succeeded, time.Hour)},
			apply:  []string{}, pending: []string{}, complete: true},
		{name: "a cluster in two groups counts once", strategy: perGroup(i0, 0, "None"),
			groups: groups([]string{"a"}, []string{"a", "b"}), states: map[string]ClusterState{"a": st(Succeeded, 0)},
			apply: []string{"b"}, pending: []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compute(Input{Strategy: tt.strategy, Groups: tt.groups, States: tt.states, Now: now})
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if want == nil {
					want = []string{}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("ToApply", names(r.ToApply), tt.apply)
			if tt.pending != nil {
				check("Pending", names(r.Pending()), tt.pending)
			}
			check("TimedOut", names(r.TimedOut), tt.timedOut)
			if r.RequeueAfter != tt.requeue {
				t.Errorf("RequeueAfter = %v, want %v", r.RequeueAfter, tt.requeue)
			}
			if r.MaxFailuresBreached != tt.breached {
				t.Errorf("MaxFailuresBreached = %v, want %v", r.MaxFailuresBreached, tt.breached)
			}
			if r.Complete != tt.complete {
				t.Errorf("Complete = %v, want %v", r.Complete, tt.complete)
			}
		})
	}
}

func TestComputeErrors(t *testing.T) {
	tests := []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
	}{
		{name: "unknown type", strategy: clusterv1alpha1.RolloutStrategy{Type: "Sometimes"}},
		{name: "bad deadline", strategy: progressive(i1, i0, 0, "10mins")},
		{name: "bad maxConcurrency", strategy: progressive(intstr.FromString("half"), i0, 0, "None")},
		{name: "bad maxFailures", strategy: perGroup(intstr.FromString("x%"), 0, "None")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compute(Input{Strategy: tt.strategy, Groups: groups([]string{"a"}), Now: now}); err == nil {
				t.Error("Compute succeeded, want an error")
			}
		})
	}
}

func TestSize(t *testing.T) {
	tests := []struct {
		v          intstr.IntOrString
		total, def int
		want       int
	}{
		{intstr.FromInt32(3), 10, 0, 3},
		{intstr.FromInt32(0), 10, 7, 7},
		{intstr.FromInt32(11), 10, 10, 10},
		{intstr.FromString("25%"), 10, 0, 3},
		{intstr.FromString("100%"), 4, 0, 4},
		{intstr.FromString("2"), 4, 0, 2},
		{intstr.FromString("0%"), 4, 9, 9},
	}
	for _, tt := range tests {
		t.Run(tt.v.String(), func(t *testing.T) {
			got, err := size(tt.v, tt.total, tt.def)
			if err != nil || got != tt.want {
				t.Errorf("size(%v, %d, %d) = %d, %v; want %d", tt.v, tt.total, tt.def, got, err, tt.want)
			}
		})
	}
}
