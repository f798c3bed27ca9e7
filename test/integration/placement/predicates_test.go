package placement

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testPredicates checks label, claim and CEL selectors: selectors of one
// predicate ANDed, predicates ORed.
func testPredicates(ctx context.Context, t *testing.T, s *suite) {
	const ns = "predicates"
	s.fixture(ctx, t, ns)
	for _, c := range []clusterSpec{
		{name: "pred-1", labels: map[string]string{"env": "prod"}, claims: map[string]string{"region": "us"}},
		{name: "pred-2", labels: map[string]string{"env": "prod"}, claims: map[string]string{"region": "eu"}},
		{name: "pred-3", labels: map[string]string{"env": "dev", "tier": "gold"}},
		{name: "pred-4", labels: map[string]string{"env": "dev"}},
	} {
		s.createCluster(ctx, t, ns, c)
	}
	s.createPlacement(ctx, t, newPlacement(ns, "mixed", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"us"}},
			}},
		}},
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{
			CelExpressions: []string{`managedCluster.metadata.labels["tier"] == "gold"`},
		}}},
	}}))
	s.waitDecided(ctx, t, ns, "mixed", "pred-1", "pred-3")
	s.waitCondition(ctx, t, ns, "mixed", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, clusterv1beta1.ReasonAllDecisionsScheduled)
	s.waitCondition(ctx, t, ns, "mixed", clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse, clusterv1beta1.ReasonSucceedconfigured)

	s.createPlacement(ctx, t, newPlacement(ns, "none", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		labelSelector(map[string]string{"env": "staging"}),
	}}))
	s.waitDecided(ctx, t, ns, "none")
	s.waitCondition(ctx, t, ns, "none", clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.ReasonNoManagedClusterMatched)
}

// testMisconfigured checks that a CEL expression that does not compile makes
// the placement Misconfigured with the compiler's message and an event, and
// that fixing it recovers.
func testMisconfigured(ctx context.Context, t *testing.T, s *suite) {
	const ns = "misconfigured"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "mis-1"})
	bad := `managedCluster.metadata.labels["env"] ==`
	s.createPlacement(ctx, t, newPlacement(ns, "bad-cel", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{bad}}}},
	}}))
	p := s.waitCondition(ctx, t, ns, "bad-cel", clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionTrue, clusterv1beta1.ReasonMisconfigured)
	c := findCondition(p, clusterv1beta1.PlacementConditionMisconfigured)
	if !strings.Contains(c.Message, "Syntax error") && !strings.Contains(c.Message, "syntax error") {
		t.Errorf("Misconfigured message %q does not carry the CEL compiler's syntax error", c.Message)
	}
	s.waitDecided(ctx, t, ns, "bad-cel")
	framework.Eventually(ctx, t, pollTimeout, "a Warning event Misconfigured about bad-cel", func(ctx context.Context) (bool, error) {
		events := &eventsv1.EventList{}
		if err := s.admin.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "bad-cel" && e.Reason == clusterv1beta1.ReasonMisconfigured && e.Type == "Warning" {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none about bad-cel", len(events.Items))
	})

	s.updatePlacement(ctx, t, ns, "bad-cel", func(p *clusterv1beta1.Placement) {
		p.Spec.Predicates[0].RequiredClusterSelector.CelSelector.CelExpressions = []string{`managedCluster.metadata.name == "mis-1"`}
	})
	s.waitCondition(ctx, t, ns, "bad-cel", clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse, clusterv1beta1.ReasonSucceedconfigured)
	s.waitDecided(ctx, t, ns, "bad-cel", "mis-1")
}

// findCondition returns the condition typ of p, or an empty one.
func findCondition(p *clusterv1beta1.Placement, typ string) metav1.Condition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// testTaints checks NoSelect, PreferNoSelect and NoSelectIfNew taints, the
// default exclusion of unreachable clusters, and a toleration that expires:
// nothing but the scheduler's own requeue removes the cluster then.
func testTaints(ctx context.Context, t *testing.T, s *suite) {
	const ns = "taints"
	s.fixture(ctx, t, ns)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	taint := func(key string, effect clusterv1.TaintEffect) []clusterv1.Taint {
		return []clusterv1.Taint{{Key: key, Value: "yes", Effect: effect, TimeAdded: now}}
	}
	for _, c := range []clusterSpec{
		{name: "taint-clean"},
		{name: "taint-noselect", taints: taint("maintenance", clusterv1.TaintEffectNoSelect)},
		{name: "taint-prefer", taints: taint("gpu-busy", clusterv1.TaintEffectPreferNoSelect)},
		{name: "taint-new", taints: taint("draining", clusterv1.TaintEffectNoSelectIfNew)},
		{name: "taint-unreachable", taints: taint(clusterv1.ManagedClusterTaintUnreachable, clusterv1.TaintEffectNoSelect)},
	} {
		s.createCluster(ctx, t, ns, c)
	}
	s.createPlacement(ctx, t, newPlacement(ns, "plain", clusterv1beta1.PlacementSpec{}))
	s.waitDecided(ctx, t, ns, "plain", "taint-clean", "taint-prefer")

	// NoSelectIfNew keeps clusters already decided.
	s.updateCluster(ctx, t, "taint-clean", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.Taints = taint("draining", clusterv1.TaintEffectNoSelectIfNew)
	})
	s.updateCluster(ctx, t, "taint-prefer", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.Taints = append(mc.Spec.Taints, taint("maintenance", clusterv1.TaintEffectNoSelect)...)
	})
	s.waitDecided(ctx, t, ns, "plain", "taint-clean")

	// A toleration with tolerationSeconds: selected until timeAdded + seconds.
	// taint-clean and taint-new are new to this placement, so NoSelectIfNew
	// keeps them out.
	const seconds = 10
	s.createPlacement(ctx, t, newPlacement(ns, "tolerating", clusterv1beta1.PlacementSpec{
		Tolerations: []clusterv1beta1.Toleration{
			{Key: "maintenance", Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](seconds)},
			{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
		},
	}))
	expiry := now.Add(seconds * time.Second)
	if time.Now().Before(expiry) {
		s.waitDecided(ctx, t, ns, "tolerating", "taint-noselect", "taint-prefer", "taint-unreachable")
	} else {
		t.Logf("toleration already expired when the placement was created; skipping the before-expiry check")
	}
	s.waitDecided(ctx, t, ns, "tolerating", "taint-unreachable")
	if time.Now().Before(expiry) {
		t.Errorf("taint-noselect and taint-prefer left the decisions at %s, before its toleration expired at %s", time.Now(), expiry)
	}
}
