package placement

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// pageShape is what a test expects of one PlacementDecision.
type pageShape struct {
	name       string
	groupIndex string
	groupName  string
	count      int
}

// waitPages waits until placement ns/name has exactly the PlacementDecisions
// of want, each with its labels, decision count and controller reference.
func (s *suite) waitPages(ctx context.Context, t *testing.T, ns, name string, want ...pageShape) []clusterv1beta1.PlacementDecision {
	t.Helper()
	var items []clusterv1beta1.PlacementDecision
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("placement %s/%s has PlacementDecisions %v", ns, name, want), func(ctx context.Context) (bool, error) {
		var err error
		if items, err = s.decisions(ctx, ns, name); err != nil {
			return false, err
		}
		var got []pageShape
		for _, d := range items {
			got = append(got, pageShape{d.Name, d.Labels[clusterv1beta1.DecisionGroupIndexLabel], d.Labels[clusterv1beta1.DecisionGroupNameLabel], len(d.Status.Decisions)})
			if ref := metav1.GetControllerOf(&d); ref == nil || ref.Kind != "Placement" || ref.Name != name || !ptr.Deref(ref.BlockOwnerDeletion, false) {
				return false, fmt.Errorf("%s: controller reference %v", d.Name, ref)
			}
		}
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("PlacementDecisions %v", got)
		}
		return true, nil
	})
	return items
}

// testPaging checks PlacementDecisions of at most 100 decisions, that only
// the PlacementDecisions whose content changed are rewritten, that surplus
// ones are deleted and that a deleted one is restored.
func testPaging(ctx context.Context, t *testing.T, s *suite) {
	const ns = "paging"
	s.fixture(ctx, t, ns)
	for i := 1; i <= 250; i++ {
		s.createCluster(ctx, t, ns, clusterSpec{name: fmt.Sprintf("page-%03d", i)})
	}
	s.createPlacement(ctx, t, newPlacement(ns, "all", clusterv1beta1.PlacementSpec{}))
	items := s.waitPages(ctx, t, ns, "all",
		pageShape{"all-decision-1", "0", "", 100}, pageShape{"all-decision-2", "0", "", 100}, pageShape{"all-decision-3", "0", "", 50})
	if first, last := items[0].Status.Decisions[0].ClusterName, items[2].Status.Decisions[49].ClusterName; first != "page-001" || last != "page-250" {
		t.Errorf("decisions run from %s to %s, want page-001 to page-250 in name order", first, last)
	}
	// The status follows the decisions in a write of its own.
	wantGroups := []clusterv1beta1.DecisionGroupStatus{{Decisions: []string{"all-decision-1", "all-decision-2", "all-decision-3"}, ClustersCount: 250}}
	framework.Eventually(ctx, t, time.Minute, "the placement's status: 250 selected in three decisions", func(ctx context.Context) (bool, error) {
		p := &clusterv1beta1.Placement{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "all"}, p); err != nil {
			return false, err
		}
		if fmt.Sprint(p.Status.DecisionGroups) != fmt.Sprint(wantGroups) || p.Status.NumberOfSelectedClusters != 250 {
			return false, fmt.Errorf("status: %d selected, decision groups %+v; want 250, %+v", p.Status.NumberOfSelectedClusters, p.Status.DecisionGroups, wantGroups)
		}
		return true, nil
	})

	t.Log("a change in the last page rewrites only that page")
	// The decisions are written settled (the scheduler runs again over the
	// clusters it decided before it writes them): Balance 100 + Steady 100.
	framework.Eventually(ctx, t, pollTimeout, "the decisions to settle at score 200", func(ctx context.Context) (bool, error) {
		var err error
		if items, err = s.decisions(ctx, ns, "all"); err != nil || len(items) != 3 {
			return false, err
		}
		for _, d := range items {
			for _, c := range d.Status.Decisions {
				if c.Score != 200 {
					return false, fmt.Errorf("%s scores %d", c.ClusterName, c.Score)
				}
			}
		}
		return true, nil
	})
	rv1, rv2 := items[0].ResourceVersion, items[1].ResourceVersion
	kit.Must(t, "delete page-250", s.admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "page-250"}}))
	items = s.waitPages(ctx, t, ns, "all",
		pageShape{"all-decision-1", "0", "", 100}, pageShape{"all-decision-2", "0", "", 100}, pageShape{"all-decision-3", "0", "", 49})
	if items[0].ResourceVersion != rv1 || items[1].ResourceVersion != rv2 {
		t.Errorf("unchanged PlacementDecisions were rewritten: resourceVersions %s→%s, %s→%s", rv1, items[0].ResourceVersion, rv2, items[1].ResourceVersion)
	}

	t.Log("an emptied page is deleted")
	for i := 201; i < 250; i++ {
		s.updateCluster(ctx, t, fmt.Sprintf("page-%03d", i), func(mc *clusterv1.ManagedCluster) {
			mc.Labels[clusterv1beta2.ClusterSetLabel] = "paging-out"
		})
	}
	s.waitPages(ctx, t, ns, "all", pageShape{"all-decision-1", "0", "", 100}, pageShape{"all-decision-2", "0", "", 100})
	framework.Eventually(ctx, t, pollTimeout, "all-decision-3 deleted", func(ctx context.Context) (bool, error) {
		err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "all-decision-3"}, &clusterv1beta1.PlacementDecision{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	t.Log("a PlacementDecision deleted by someone else is restored")
	kit.Must(t, "delete all-decision-1", s.admin.Delete(ctx, &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all-decision-1"}}))
	framework.Eventually(ctx, t, pollTimeout, "all-decision-1 restored", func(ctx context.Context) (bool, error) {
		d := &clusterv1beta1.PlacementDecision{}
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "all-decision-1"}, d); err != nil {
			return false, err
		}
		return len(d.Status.Decisions) == 100 && d.Status.Decisions[0].ClusterName == "page-001", nil
	})
}

// testGroups checks named decision groups, clustersPerDecisionGroup, the
// group labels and status.decisionGroups.
func testGroups(ctx context.Context, t *testing.T, s *suite) {
	const ns = "groups"
	s.fixture(ctx, t, ns)
	for _, name := range names("grp", 1, 5) {
		labels := map[string]string{}
		if name == "grp-1" || name == "grp-4" {
			labels["canary"] = "true"
		}
		s.createCluster(ctx, t, ns, clusterSpec{name: name, labels: labels})
	}
	s.createPlacement(ctx, t, newPlacement(ns, "rollout", clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{
		GroupStrategy: clusterv1beta1.GroupStrategy{
			ClustersPerDecisionGroup: intstr.FromInt32(2),
			DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary", ClusterSelector: clusterv1beta1.GroupClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}},
			}}},
		},
	}}))
	items := s.waitPages(ctx, t, ns, "rollout",
		pageShape{"rollout-decision-1", "0", "canary", 2}, pageShape{"rollout-decision-2", "1", "", 2}, pageShape{"rollout-decision-3", "2", "", 1})
	var got [][]string
	for _, d := range items {
		var cs []string
		for _, c := range d.Status.Decisions {
			cs = append(cs, c.ClusterName)
		}
		got = append(got, cs)
	}
	if want := [][]string{{"grp-1", "grp-4"}, {"grp-2", "grp-3"}, {"grp-5"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("groups hold %v, want %v", got, want)
	}
	p := s.waitCondition(ctx, t, ns, "rollout", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled)
	want := []clusterv1beta1.DecisionGroupStatus{
		{DecisionGroupIndex: 0, DecisionGroupName: "canary", Decisions: []string{"rollout-decision-1"}, ClustersCount: 2},
		{DecisionGroupIndex: 1, Decisions: []string{"rollout-decision-2"}, ClustersCount: 2},
		{DecisionGroupIndex: 2, Decisions: []string{"rollout-decision-3"}, ClustersCount: 1},
	}
	if fmt.Sprint(p.Status.DecisionGroups) != fmt.Sprint(want) {
		t.Errorf("status.decisionGroups %+v, want %+v", p.Status.DecisionGroups, want)
	}
}

// testCount checks numberOfClusters and the PlacementSatisfied reasons.
func testCount(ctx context.Context, t *testing.T, s *suite) {
	const ns = "count"
	s.fixture(ctx, t, ns)
	for _, name := range names("cnt", 1, 3) {
		s.createCluster(ctx, t, ns, clusterSpec{name: name})
	}
	s.createPlacement(ctx, t, newPlacement(ns, "five", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](5)}))
	s.waitDecided(ctx, t, ns, "five", "cnt-1", "cnt-2", "cnt-3")
	s.waitCondition(ctx, t, ns, "five", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNotAllDecisionsScheduled)
	s.updatePlacement(ctx, t, ns, "five", func(p *clusterv1beta1.Placement) { p.Spec.NumberOfClusters = ptr.To[int32](2) })
	s.waitCondition(ctx, t, ns, "five", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled)
	s.waitDecided(ctx, t, ns, "five", "cnt-1", "cnt-2")

	s.createPlacement(ctx, t, newPlacement(ns, "not-bound", clusterv1beta1.PlacementSpec{ClusterSets: []string{"count-other"}}))
	s.waitCondition(ctx, t, ns, "not-bound", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNoIntersection)
	s.waitPages(ctx, t, ns, "not-bound", pageShape{"not-bound-decision-1", "0", "", 0})

	kit.Must(t, "create set", s.admin.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "count-other"}}))
	s.bind(ctx, t, ns, "count-other")
	s.waitCondition(ctx, t, ns, "not-bound", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonAllManagedClusterSetsEmpty)

	kit.Must(t, "create namespace", s.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "count-unbound"}}))
	s.createPlacement(ctx, t, newPlacement("count-unbound", "lonely", clusterv1beta1.PlacementSpec{}))
	s.waitCondition(ctx, t, "count-unbound", "lonely", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterSetBindings)
}

// testSpread checks spread constraints on a label topology, ScheduleAnyway
// and DoNotSchedule.
func testSpread(ctx context.Context, t *testing.T, s *suite) {
	const ns = "spread"
	s.fixture(ctx, t, ns)
	for _, c := range []struct{ name, zone string }{
		{"sp-a1", "a"}, {"sp-a2", "a"}, {"sp-a3", "a"}, {"sp-b1", "b"}, {"sp-c1", "c"},
	} {
		s.createCluster(ctx, t, ns, clusterSpec{name: c.name, labels: map[string]string{"zone": c.zone}})
	}
	spread := func(n int32, action clusterv1beta1.UnsatisfiableMaxSkewAction) clusterv1beta1.PlacementSpec {
		// Exact mode without prioritizers: every cluster scores 0, ties go
		// by name, and only the spread decides.
		return clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To(n),
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact},
			SpreadPolicy: clusterv1beta1.SpreadPolicy{
				SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{{
					TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, MaxSkew: 1, WhenUnsatisfiable: action,
				}},
			}}
	}
	s.createPlacement(ctx, t, newPlacement(ns, "one-per-zone", spread(3, clusterv1beta1.ScheduleAnyway)))
	s.waitDecided(ctx, t, ns, "one-per-zone", "sp-a1", "sp-b1", "sp-c1")
	s.createPlacement(ctx, t, newPlacement(ns, "strict", spread(5, clusterv1beta1.DoNotSchedule)))
	s.waitDecided(ctx, t, ns, "strict", "sp-a1", "sp-a2", "sp-b1", "sp-c1")
	s.waitCondition(ctx, t, ns, "strict", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNotAllDecisionsScheduled)
	s.createPlacement(ctx, t, newPlacement(ns, "anyway", spread(5, clusterv1beta1.ScheduleAnyway)))
	s.waitDecided(ctx, t, ns, "anyway", "sp-a1", "sp-a2", "sp-a3", "sp-b1", "sp-c1")
}
