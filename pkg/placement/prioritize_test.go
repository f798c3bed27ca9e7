package placement

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// builtIn configures a built-in prioritizer.
func builtIn(name string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{Weight: weight,
		ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}}
}

// addOn configures an add-on score prioritizer.
func addOn(resource, scoreName string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{Weight: weight,
		ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: resource, ScoreName: scoreName}}}
}

func TestPrioritizers(t *testing.T) {
	future, past := now.Add(time.Hour), now.Add(-time.Hour)
	item := func(name string, v int32) clusterv1alpha1.AddOnPlacementScoreItem {
		return clusterv1alpha1.AddOnPlacementScoreItem{Name: name, Value: v}
	}
	clusters := []*clusterv1.ManagedCluster{
		newCluster("a").alloc("1", "1Gi").build(),
		newCluster("b").alloc("2", "3Gi").build(),
		newCluster("c").alloc("3", "2Gi").build(),
	}
	scores := []*clusterv1alpha1.AddOnPlacementScore{
		score("a", "usage", nil, item("cpu", 50), item("mem", 10)),
		score("b", "usage", &past, item("cpu", 90)),
		score("c", "usage", &future, item("cpu", -20)),
	}
	exact := func(cfgs ...clusterv1beta1.PrioritizerConfig) clusterv1beta1.PrioritizerPolicy {
		return clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact, Configurations: cfgs}
	}
	type s = map[string]int64
	tests := []struct {
		name    string
		policy  clusterv1beta1.PrioritizerPolicy
		decided []string
		other   map[string]int
		scores  map[string]s
		totals  map[string]int64
		requeue time.Duration
	}{
		{name: "additive defaults are Balance and Steady", decided: []string{"b"}, other: map[string]int{"a": 2, "c": 1},
			scores: map[string]s{"a": {"BuiltIn:Balance": -100, "BuiltIn:Steady": 0}, "b": {"BuiltIn:Balance": 100, "BuiltIn:Steady": 100},
				"c": {"BuiltIn:Balance": 0, "BuiltIn:Steady": 0}},
			totals: map[string]int64{"a": -100, "b": 200, "c": 0}},
		{name: "additive override and disable", decided: []string{"b"},
			policy: clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{
				builtIn("Steady", 3), builtIn("Balance", 0)}},
			scores: map[string]s{"b": {"BuiltIn:Steady": 100}}, totals: map[string]int64{"a": 0, "b": 300}},
		{name: "exact CPU", policy: exact(builtIn("ResourceAllocatableCPU", 1)),
			scores: map[string]s{"a": {"BuiltIn:ResourceAllocatableCPU": -100}, "b": {"BuiltIn:ResourceAllocatableCPU": 0},
				"c": {"BuiltIn:ResourceAllocatableCPU": 100}}},
		{name: "exact memory with weight 2", policy: exact(builtIn("ResourceAllocatableMemory", 2)),
			scores: map[string]s{"a": {"BuiltIn:ResourceAllocatableMemory": -100}, "b": {"BuiltIn:ResourceAllocatableMemory": 100},
				"c": {"BuiltIn:ResourceAllocatableMemory": 0}},
			totals: map[string]int64{"a": -200, "b": 200, "c": 0}},
		{name: "negative weight", policy: exact(builtIn("ResourceAllocatableCPU", -1)),
			totals: map[string]int64{"a": 100, "b": 0, "c": -100}},
		{name: "add-on: expired and missing score 0, future expiry requeues",
			policy: exact(addOn("usage", "cpu", 1), addOn("usage", "mem", 1), addOn("missing", "x", 1)),
			scores: map[string]s{"a": {"AddOn:usage:cpu": 50, "AddOn:usage:mem": 10, "AddOn:missing:x": 0},
				"b": {"AddOn:usage:cpu": 0, "AddOn:usage:mem": 0, "AddOn:missing:x": 0},
				"c": {"AddOn:usage:cpu": -20, "AddOn:usage:mem": 0, "AddOn:missing:x": 0}},
			totals: map[string]int64{"a": 60, "b": 0, "c": -20}, requeue: time.Hour},
		{name: "exact with nothing configured scores 0", policy: exact(),
			scores: map[string]s{"a": {}}, totals: map[string]int64{"a": 0, "b": 0, "c": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := defaultInput(clusterv1beta1.PlacementSpec{PrioritizerPolicy: tt.policy}, clusters...)
			in.Scores, in.Decided, in.OtherDecisions = scores, tt.decided, tt.other
			res := NewScheduler().Schedule(in)
			for name, want := range tt.scores {
				if got := explanation(t, res, name).Scores; !reflect.DeepEqual(got, want) && len(want) > 0 {
					t.Errorf("%s scores = %v, want %v", name, got, want)
				} else if len(want) == 0 && len(got) != 0 {
					t.Errorf("%s scores = %v, want none", name, got)
				}
			}
			for name, want := range tt.totals {
				if got := explanation(t, res, name).Total; got != want {
					t.Errorf("%s total = %d, want %d", name, got, want)
				}
			}
			for _, g := range res.Groups {
				for _, d := range g.Decisions {
					if want := explanation(t, res, d.ClusterName).Total; d.Score != want || d.Reason != "" {
						t.Errorf("decision %+v, want score %d and no reason", d, want)
					}
				}
			}
			if res.RequeueAfter != tt.requeue {
				t.Errorf("requeueAfter = %v, want %v", res.RequeueAfter, tt.requeue)
			}
		})
	}
}

func TestResourceAllEqualScores100(t *testing.T) {
	in := defaultInput(clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
		Mode: clusterv1beta1.PrioritizerPolicyModeExact, Configurations: []clusterv1beta1.PrioritizerConfig{
			builtIn("ResourceAllocatableCPU", 1)}}},
		newCluster("a").alloc("4", "").build(), newCluster("b").alloc("4000m", "").build())
	res := NewScheduler().Schedule(in)
	for _, n := range []string{"a", "b"} {
		if got := explanation(t, res, n).Total; got != 100 {
			t.Errorf("%s total = %d, want 100", n, got)
		}
	}
}

func TestNumberOfClusters(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{
		newCluster("d").alloc("1", "").build(),
		newCluster("c").alloc("3", "").build(),
		newCluster("b").alloc("3", "").build(),
		newCluster("a").alloc("2", "").build(),
	}
	cpu := clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
		Configurations: []clusterv1beta1.PrioritizerConfig{builtIn("ResourceAllocatableCPU", 1)}}
	tests := []struct {
		name   string
		n      *int32
		policy clusterv1beta1.PrioritizerPolicy
		sortBy clusterv1beta1.PlacementSortBy
		want   []string
		ranked map[string]string
	}{
		{name: "top 2 by score, ties by name, decisions by name", n: ptr.To[int32](2), policy: cpu, want: []string{"b", "c"},
			ranked: map[string]string{"a": "rank 3, only 2 clusters wanted", "d": "rank 4, only 2 clusters wanted"}},
		{name: "tie broken by name", n: ptr.To[int32](1), policy: cpu, want: []string{"b"}},
		{name: "sortBy Score orders decisions by score", n: ptr.To[int32](3), policy: cpu, sortBy: clusterv1beta1.SortByScore,
			want: []string{"b", "c", "a"}},
		{name: "sortBy ClusterName", n: ptr.To[int32](3), policy: cpu, sortBy: clusterv1beta1.SortByClusterName,
			want: []string{"a", "b", "c"}},
		{name: "all scores equal picks by name", n: ptr.To[int32](2), want: []string{"a", "b"}},
		{name: "unset selects all", want: []string{"a", "b", "c", "d"}},
		{name: "zero selects none", n: ptr.To[int32](0), want: nil},
		{name: "more than available", n: ptr.To[int32](9), want: []string{"a", "b", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := NewScheduler().Schedule(defaultInput(clusterv1beta1.PlacementSpec{NumberOfClusters: tt.n,
				PrioritizerPolicy: tt.policy, SortBy: tt.sortBy}, clusters...))
			if got := selectedNames(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decisions = %v, want %v", got, tt.want)
			}
			if res.Selected != len(tt.want) {
				t.Errorf("Selected = %d, want %d", res.Selected, len(tt.want))
			}
			for name, reason := range tt.ranked {
				if e := explanation(t, res, name); e.Stage != StageRank || e.Reason != reason || e.Scores == nil {
					t.Errorf("%s: %s %q scores %v, want Rank %q with scores", name, e.Stage, e.Reason, e.Scores, reason)
				}
			}
			for _, name := range tt.want {
				if e := explanation(t, res, name); e.Stage != StageSelected || !strings.HasPrefix(e.Reason, "selected, rank") {
					t.Errorf("%s: %s %q", name, e.Stage, e.Reason)
				}
			}
		})
	}
}
