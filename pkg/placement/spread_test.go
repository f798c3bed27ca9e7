package placement

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

func TestSpread(t *testing.T) {
	// Scores by CPU: a1 > a2 > a3 > b1 > b2 > c1 > n1 (no zone).
	clusters := []*clusterv1.ManagedCluster{
		newCluster("a1").label("zone", "a").claim("region", "x").alloc("10", "").build(),
		newCluster("a2").label("zone", "a").claim("region", "x").alloc("9", "").build(),
		newCluster("a3").label("zone", "a").claim("region", "x").alloc("8", "").build(),
		newCluster("b1").label("zone", "b").claim("region", "y").alloc("7", "").build(),
		newCluster("b2").label("zone", "b").claim("region", "y").alloc("6", "").build(),
		newCluster("c1").label("zone", "c").claim("region", "y").alloc("5", "").build(),
		newCluster("n1").alloc("4", "").build(),
	}
	zone := func(mode clusterv1beta1.UnsatisfiableMaxSkewAction, skew int32) clusterv1beta1.SpreadConstraintsTerm {
		return clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel,
			MaxSkew: skew, WhenUnsatisfiable: mode}
	}
	region := clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "region", TopologyKeyType: clusterv1beta1.TopologyKeyTypeClaim,
		MaxSkew: 1, WhenUnsatisfiable: clusterv1beta1.DoNotSchedule}
	tests := []struct {
		name   string
		n      *int32
		terms  []clusterv1beta1.SpreadConstraintsTerm
		want   []string
		stages map[string]Stage
		reason map[string]string
		unsch  string
	}{
		{name: "no constraint takes top 3", n: ptr.To[int32](3), want: []string{"a1", "a2", "a3"}},
		{name: "DoNotSchedule spreads over zones", n: ptr.To[int32](3), terms: []clusterv1beta1.SpreadConstraintsTerm{zone(clusterv1beta1.DoNotSchedule, 1)},
			want:   []string{"a1", "b1", "c1"},
			stages: map[string]Stage{"a2": StageSpread, "b2": StageSpread, "n1": StageSpread},
			reason: map[string]string{
				"n1": "spread constraint 0 (label zone, maxSkew 1, DoNotSchedule): cluster has no zone",
				"a2": "spread constraint 0 (label zone, maxSkew 1, DoNotSchedule): zone=a would have 2 selected clusters while another domain has 1"}},
		{name: "maxSkew 2 allows two in a zone first", n: ptr.To[int32](3), terms: []clusterv1beta1.SpreadConstraintsTerm{zone(clusterv1beta1.DoNotSchedule, 2)},
			want: []string{"a1", "a2", "b1"}},
		{name: "DoNotSchedule without numberOfClusters drops the excess", terms: []clusterv1beta1.SpreadConstraintsTerm{zone(clusterv1beta1.DoNotSchedule, 1)},
			want:   []string{"a1", "a2", "b1", "b2", "c1"},
			stages: map[string]Stage{"a3": StageSpread, "n1": StageSpread},
			unsch:  "2 cluster decisions unscheduled"},
		{name: "claim topology", n: ptr.To[int32](2), terms: []clusterv1beta1.SpreadConstraintsTerm{region},
			want: []string{"a1", "b1"}},
		{name: "ScheduleAnyway prefers other zones", n: ptr.To[int32](4), terms: []clusterv1beta1.SpreadConstraintsTerm{zone(clusterv1beta1.ScheduleAnyway, 1)},
			want:   []string{"a1", "a2", "b1", "c1"},
			stages: map[string]Stage{"a3": StageSpread, "b2": StageSpread, "n1": StageRank},
			reason: map[string]string{"a3": "spread constraints preferred clusters in other domains", "n1": "rank 7, only 4 clusters wanted"}},
		{name: "ScheduleAnyway never drops clusters", terms: []clusterv1beta1.SpreadConstraintsTerm{zone(clusterv1beta1.ScheduleAnyway, 1)},
			want: []string{"a1", "a2", "a3", "b1", "b2", "c1", "n1"}},
		{name: "two constraints", n: ptr.To[int32](3), terms: []clusterv1beta1.SpreadConstraintsTerm{region, zone(clusterv1beta1.ScheduleAnyway, 1)},
			want: []string{"a1", "b1", "c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := NewScheduler().Schedule(defaultInput(clusterv1beta1.PlacementSpec{NumberOfClusters: tt.n,
				SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: tt.terms},
				PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
					Configurations: []clusterv1beta1.PrioritizerConfig{builtIn("ResourceAllocatableCPU", 1)}}}, clusters...))
			if got := sortedSelected(res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selected = %v, want %v", got, tt.want)
			}
			for name, st := range tt.stages {
				if e := explanation(t, res, name); e.Stage != st {
					t.Errorf("%s: %s %q, want %s", name, e.Stage, e.Reason, st)
				}
			}
			for name, r := range tt.reason {
				if e := explanation(t, res, name); !strings.Contains(e.Reason, r) {
					t.Errorf("%s: reason %q, want %q", name, e.Reason, r)
				}
			}
			if tt.unsch != "" && res.Satisfied.Message != tt.unsch {
				t.Errorf("satisfied = %+v, want %q", res.Satisfied, tt.unsch)
			}
		})
	}
}
