package placement

import (
	"sort"
	"testing"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

func TestExplanationStages(t *testing.T) {
	in := defaultInput(clusterv1beta1.PlacementSpec{
		NumberOfClusters: ptr.To[int32](2),
		Predicates:       []clusterv1beta1.ClusterPredicate{labelPredicate(map[string]string{"env": "prod"})},
		SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{{
			TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, MaxSkew: 1,
			WhenUnsatisfiable: clusterv1beta1.DoNotSchedule}}},
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{builtIn("ResourceAllocatableCPU", 1)}},
	},
		newCluster("z-selected-1").label("env", "prod").label("zone", "a").alloc("8", "").build(),
		newCluster("y-spread").label("env", "prod").label("zone", "a").alloc("7", "").build(),
		newCluster("x-selected-2").label("env", "prod").label("zone", "b").alloc("6", "").build(),
		newCluster("w-rank").label("env", "prod").label("zone", "b").alloc("5", "").build(),
		newCluster("v-taint").label("env", "prod").label("zone", "c").
			taint(clusterv1.ManagedClusterTaintUnreachable, "", clusterv1.TaintEffectNoSelect, now).build(),
		newCluster("u-predicate").label("env", "dev").build(),
		newCluster("t-deleting").label("env", "prod").deleting().build(),
		newCluster("s-clusterset").set("other").label("env", "prod").build(),
	)
	in.ClusterSets = append(in.ClusterSets, exclusiveSet("other"))
	in.Bindings = append(in.Bindings, &clusterv1beta2.ManagedClusterSetBinding{})
	res := NewScheduler().Schedule(in)

	want := map[string]struct {
		stage  Stage
		reason string
		scored bool
	}{
		"z-selected-1": {StageSelected, "selected, rank 1 of 2 with score 100", true},
		"x-selected-2": {StageSelected, "selected, rank 2 of 2 with score -33", true},
		"y-spread":     {StageSpread, "spread constraint 0 (label zone, maxSkew 1, DoNotSchedule): zone=a would have 2 selected clusters while another domain has 1", true},
		"w-rank":       {StageRank, "rank 4, only 2 clusters wanted", true},
		"v-taint":      {StageTaint, "taint cluster.open-cluster-management.io/unreachable:NoSelect is not tolerated", false},
		"u-predicate":  {StagePredicate, "predicate 0: label env=prod does not match (cluster has env=dev)", false},
		"t-deleting":   {StageDeleting, "cluster is being deleted", false},
		"s-clusterset": {StageClusterSet, "cluster is in no ManagedClusterSet the placement can use in namespace apps", false},
	}
	if len(res.Clusters) != len(want) {
		t.Fatalf("%d explanations, want %d", len(res.Clusters), len(want))
	}
	if !sort.SliceIsSorted(res.Clusters, func(a, b int) bool { return res.Clusters[a].Cluster < res.Clusters[b].Cluster }) {
		t.Errorf("explanations are not sorted by name")
	}
	for _, e := range res.Clusters {
		w := want[e.Cluster]
		if e.Stage != w.stage || e.Reason != w.reason || e.Selected != (w.stage == StageSelected) {
			t.Errorf("%s: %s %q selected=%v, want %s %q", e.Cluster, e.Stage, e.Reason, e.Selected, w.stage, w.reason)
		}
		if (e.Scores != nil) != w.scored {
			t.Errorf("%s: scores %v, want scored=%v", e.Cluster, e.Scores, w.scored)
		}
	}
	if res.Selected != 2 || res.Satisfied.Reason != clusterv1beta1.ReasonAllDecisionsScheduled {
		t.Errorf("selected %d, satisfied %+v", res.Selected, res.Satisfied)
	}
}

func TestScheduleNilPlacement(t *testing.T) {
	res := NewScheduler().Schedule(Input{})
	if len(res.Groups) != 1 || len(res.Groups[0].Decisions) != 0 || res.Selected != 0 {
		t.Errorf("result = %+v, want one empty group", res)
	}
}

func TestScheduleDoesNotMutateInput(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{newCluster("b").build(), newCluster("a").build()}
	in := defaultInput(clusterv1beta1.PlacementSpec{}, clusters...)
	NewScheduler().Schedule(in)
	if clusters[0].Name != "b" || clusters[1].Name != "a" {
		t.Errorf("input cluster slice reordered: %s, %s", clusters[0].Name, clusters[1].Name)
	}
}
