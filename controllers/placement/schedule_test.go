package placement

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	placementlib "github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// TestScheduleOverMayMatch checks that scheduling over the clusters the
// predicates may match gives the result of scheduling over every cluster:
// decisions, groups, conditions and requeue.
func TestScheduleOverMayMatch(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var clusters []*clusterv1.ManagedCluster
	var scores []*clusterv1alpha1.AddOnPlacementScore
	other := map[string]int{}
	for i := range 40 {
		b := mc(fmt.Sprintf("c%02d", i), "slice", fmt.Sprint(i%4), "zone", fmt.Sprint("z", i%3), "tier", []string{"canary", "main"}[i%5/4])
		if i%3 == 0 {
			b.claim("cloud", "aws")
		}
		if i%7 == 0 {
			b.c.Spec.Taints = []clusterv1.Taint{{Key: "maintenance", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.NewTime(now.Add(-time.Minute))}}
		}
		if i == 9 {
			b.deleting()
		}
		b.cpu(fmt.Sprint(1 + i%5))
		clusters = append(clusters, b.build())
		scores = append(scores, &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: b.c.Name, Name: "demo"},
			Status: clusterv1alpha1.AddOnPlacementScoreStatus{Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "score", Value: int32(i*37%201 - 100)}}}})
		other[b.c.Name] = i % 3
	}
	tolerateFor := func(s *spec, seconds int64) *spec {
		s.s.Tolerations = []clusterv1beta1.Toleration{{Key: "maintenance", Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To(seconds)}}
		return s
	}
	doNotSchedule := func(s *spec) *spec {
		s.s.SpreadPolicy.SpreadConstraints[0].WhenUnsatisfiable = clusterv1beta1.DoNotSchedule
		return s
	}
	exact := func(s *spec) *spec {
		s.s.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeExact
		return s
	}
	badSelector := &spec{clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "slice", Operator: "Bogus"}}}}}}}}
	labelAndCEL := byLabel("slice", "1")
	labelAndCEL.s.Predicates[0].RequiredClusterSelector.CelSelector.CelExpressions = []string{`managedCluster.metadata.labels["zone"] != "z0"`}
	tests := []struct {
		name string
		spec *spec
		sets []string // the sets bound; "s" when nil
	}{
		{name: "a slice", spec: byLabel("slice", "1")},
		{name: "a slice, 3 of it by Balance and Steady", spec: byLabel("slice", "2").count(3)},
		{name: "more than the slice holds", spec: byLabel("slice", "2").count(20)},
		{name: "Exact: AddOn, CPU, Balance", spec: exact(byLabel("slice", "3").count(4).prioritize(addOnScore).
			prioritize(builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU)).prioritize(builtIn(clusterv1beta1.PrioritizerBalance)))},
		{name: "claim", spec: byClaim("cloud", "aws")},
		{name: "label and CEL", spec: labelAndCEL},
		{name: "decision groups and spread", spec: byLabel("slice", "0").groupsBy("tier", "canary").spreadBy("zone")},
		{name: "spread DoNotSchedule", spec: doNotSchedule(byLabel("slice", "0").count(7).spreadBy("zone"))},
		{name: "toleration expiring: requeue", spec: tolerateFor(byLabel("slice", "0"), 3600)},
		{name: "toleration expired", spec: tolerateFor(byLabel("slice", "0"), 30)},
		{name: "selects nothing, sets not empty: NoManagedClusterMatched", spec: byLabel("slice", "9")},
		{name: "selects nothing, sets empty: AllManagedClusterSetsEmpty", spec: byLabel("slice", "9"), sets: []string{"elsewhere"}},
		{name: "no binding", spec: byLabel("slice", "1"), sets: []string{}},
		{name: "misconfigured", spec: badSelector},
		{name: "no predicates", spec: anyCluster().count(5)},
	}
	r := &Reconciler{Scheduler: placementlib.NewScheduler()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sets := tt.sets
			if sets == nil {
				sets = []string{"s"}
			}
			in := placementlib.Input{
				Placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "p"}, Spec: tt.spec.s},
				Clusters:  clusters, Scores: scores, OtherDecisions: other, Now: now,
				Decided: []string{"c04", "c08", "c14"},
				ClusterSets: []*clusterv1beta2.ManagedClusterSet{
					{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, {ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}},
			}
			for _, s := range sets {
				in.Bindings = append(in.Bindings, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: s},
					Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: s}})
			}
			want := r.Scheduler.Schedule(in)
			got := r.schedule(in, placementlib.NewPredicateFilter(tt.spec.s.Predicates))
			if !reflect.DeepEqual(got.Groups, want.Groups) || got.Selected != want.Selected {
				t.Errorf("decisions %+v (%d), want %+v (%d)", got.Groups, got.Selected, want.Groups, want.Selected)
			}
			if got.Satisfied != want.Satisfied || got.Misconfigured != want.Misconfigured || got.RequeueAfter != want.RequeueAfter {
				t.Errorf("conditions %+v %+v requeue %s,\nwant %+v %+v requeue %s",
					got.Satisfied, got.Misconfigured, got.RequeueAfter, want.Satisfied, want.Misconfigured, want.RequeueAfter)
			}
		})
	}
}

// BenchmarkScheduleSlice schedules a placement selecting 100 of 10,000
// clusters (one value of a label with 100), over every cluster and over
// the ones its predicates may match, as Reconcile does.
func BenchmarkScheduleSlice(b *testing.B) {
	clusters := make([]*clusterv1.ManagedCluster, 10000)
	for i := range clusters {
		clusters[i] = mc(fmt.Sprintf("bench-%05d", i), "slice", fmt.Sprintf("s%03d", i%100)).build()
	}
	s := byLabel("slice", "s007")
	in := placementlib.Input{
		Placement:   &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "p"}, Spec: s.s},
		Clusters:    clusters,
		ClusterSets: []*clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "s"}}},
		Bindings: []*clusterv1beta2.ManagedClusterSetBinding{{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "s"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "s"}}},
	}
	r := &Reconciler{Scheduler: placementlib.NewScheduler()}
	filter := placementlib.NewPredicateFilter(s.s.Predicates)
	for _, bb := range []struct {
		name   string
		filter placementlib.PredicateFilter
	}{{"every cluster", placementlib.PredicateFilter{}}, {"may match", filter}} {
		b.Run(bb.name, func(b *testing.B) {
			if res := r.schedule(in, bb.filter); res.Selected != 100 {
				b.Fatalf("selected %d", res.Selected)
			}
			b.ReportAllocs()
			for b.Loop() {
				r.schedule(in, bb.filter)
			}
		})
	}
}
