package placement

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testReschedule checks that every kind of change reschedules at once: a
// label, a claim, a taint, a cluster created and deleted, set membership and
// a binding deleted.
func testReschedule(ctx context.Context, t *testing.T, s *suite) {
	const ns = "reschedule"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "res-1", labels: map[string]string{"env": "prod"}, claims: map[string]string{"cloud": "aws"}})
	s.createCluster(ctx, t, ns, clusterSpec{name: "res-2", labels: map[string]string{"env": "prod"}})
	s.createCluster(ctx, t, ns, clusterSpec{name: "res-3"})
	s.createPlacement(ctx, t, newPlacement(ns, "by-label", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		labelSelector(map[string]string{"env": "prod"}),
	}}))
	s.createPlacement(ctx, t, newPlacement(ns, "by-claim", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "cloud", Operator: metav1.LabelSelectorOpIn, Values: []string{"aws"}}},
		}}},
	}}))
	s.waitDecided(ctx, t, ns, "by-label", "res-1", "res-2")
	s.waitDecided(ctx, t, ns, "by-claim", "res-1")

	t.Log("label")
	s.updateCluster(ctx, t, "res-3", func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = "prod" })
	s.waitDecided(ctx, t, ns, "by-label", "res-1", "res-2", "res-3")

	t.Log("claim")
	s.updateCluster(ctx, t, "res-2", func(mc *clusterv1.ManagedCluster) {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "cloud", Value: "aws"}}
	})
	s.waitDecided(ctx, t, ns, "by-claim", "res-1", "res-2")

	t.Log("taint")
	s.updateCluster(ctx, t, "res-1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.Taints = []clusterv1.Taint{{Key: "maintenance", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()}}
	})
	s.waitDecided(ctx, t, ns, "by-label", "res-2", "res-3")
	s.waitDecided(ctx, t, ns, "by-claim", "res-2")

	t.Log("heartbeat-only changes do not matter, a new cluster does")
	s.updateCluster(ctx, t, "res-2", func(mc *clusterv1.ManagedCluster) {
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
			Reason: "ManagedClusterAvailable", Message: "heartbeat", LastTransitionTime: metav1.Now()}}
	})
	s.createCluster(ctx, t, ns, clusterSpec{name: "res-4", labels: map[string]string{"env": "prod"}})
	s.waitDecided(ctx, t, ns, "by-label", "res-2", "res-3", "res-4")

	t.Log("cluster deleted")
	kit.Must(t, "delete res-4", s.admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "res-4"}}))
	s.waitDecided(ctx, t, ns, "by-label", "res-2", "res-3")

	t.Log("set membership")
	s.updateCluster(ctx, t, "res-2", func(mc *clusterv1.ManagedCluster) { mc.Labels[clusterv1beta2.ClusterSetLabel] = "reschedule-elsewhere" })
	s.waitDecided(ctx, t, ns, "by-label", "res-3")
	s.waitDecided(ctx, t, ns, "by-claim")

	t.Log("set bound to the namespace")
	kit.Must(t, "create set", s.admin.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "reschedule-elsewhere"}}))
	s.bind(ctx, t, ns, "reschedule-elsewhere")
	s.waitDecided(ctx, t, ns, "by-label", "res-2", "res-3")
	s.waitDecided(ctx, t, ns, "by-claim", "res-2")

	t.Log("bindings deleted")
	for _, set := range []string{ns, "reschedule-elsewhere"} {
		kit.Must(t, "delete binding "+set, s.admin.Delete(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set}}))
	}
	s.waitDecided(ctx, t, ns, "by-label")
	s.waitCondition(ctx, t, ns, "by-label", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterSetBindings)
}

// testDisabled checks that a placement annotated with
// experimental-scheduling-disable is left alone, and scheduled once the
// annotation goes.
func testDisabled(ctx context.Context, t *testing.T, s *suite) {
	const ns = "disabled"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "dis-1"})
	p := newPlacement(ns, "off", clusterv1beta1.PlacementSpec{})
	p.Annotations = map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"}
	s.createPlacement(ctx, t, p)
	// A placement created afterwards in the same namespace is scheduled; by
	// then the disabled one would have been too.
	s.createPlacement(ctx, t, newPlacement(ns, "on", clusterv1beta1.PlacementSpec{}))
	s.waitDecided(ctx, t, ns, "on", "dis-1")
	items, err := s.decisions(ctx, ns, "off")
	kit.Must(t, "list decisions", err)
	got := &clusterv1beta1.Placement{}
	kit.Must(t, "get placement", s.admin.Get(ctx, client.ObjectKeyFromObject(p), got))
	if len(items) > 0 || len(got.Status.Conditions) > 0 {
		t.Fatalf("disabled placement scheduled: %d decisions, conditions %v", len(items), got.Status.Conditions)
	}
	s.updatePlacement(ctx, t, ns, "off", func(p *clusterv1beta1.Placement) { delete(p.Annotations, clusterv1beta1.PlacementDisableAnnotation) })
	s.waitDecided(ctx, t, ns, "off", "dis-1")
}

// testCELReschedule checks that a CEL selector reading fields other than
// labels, claims and allocatable (an annotation, status.version) is
// re-evaluated when they change, both ways.
func testCELReschedule(ctx context.Context, t *testing.T, s *suite) {
	const ns = "cel-reschedule"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "cel-1"})
	s.createCluster(ctx, t, ns, clusterSpec{name: "cel-2"})
	cel := func(name, expr string) {
		s.createPlacement(ctx, t, newPlacement(ns, name, clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{expr}}}},
		}}))
	}
	cel("by-annotation", `has(managedCluster.metadata.annotations) && "tier" in managedCluster.metadata.annotations && `+
		`managedCluster.metadata.annotations["tier"] == "gold"`)
	cel("by-version", `has(managedCluster.status) && has(managedCluster.status.version) && `+
		`has(managedCluster.status.version.kubernetes) && managedCluster.status.version.kubernetes.startsWith("v1.37.")`)
	for _, p := range []string{"by-annotation", "by-version"} {
		s.waitCondition(ctx, t, ns, p, clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterMatched)
		s.waitDecided(ctx, t, ns, p)
	}

	t.Log("annotation added")
	s.updateCluster(ctx, t, "cel-1", func(mc *clusterv1.ManagedCluster) { mc.Annotations = map[string]string{"tier": "gold"} })
	s.waitDecided(ctx, t, ns, "by-annotation", "cel-1")
	t.Log("status.version reported")
	s.updateCluster(ctx, t, "cel-2", func(mc *clusterv1.ManagedCluster) { mc.Status.Version.Kubernetes = "v1.37.1" })
	s.waitDecided(ctx, t, ns, "by-version", "cel-2")
	t.Log("annotation changed, version upgraded")
	s.updateCluster(ctx, t, "cel-1", func(mc *clusterv1.ManagedCluster) { mc.Annotations["tier"] = "silver" })
	s.updateCluster(ctx, t, "cel-2", func(mc *clusterv1.ManagedCluster) { mc.Status.Version.Kubernetes = "v1.38.0" })
	s.waitDecided(ctx, t, ns, "by-annotation")
	s.waitDecided(ctx, t, ns, "by-version")
}
