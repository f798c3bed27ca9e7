package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testClusterSets checks the built-in sets, set status and binding status.
func testClusterSets(ctx context.Context, t *testing.T, admin client.Client) {
	waitSet := func(name, what string, ok func(*clusterv1beta2.ManagedClusterSet) bool) {
		t.Helper()
		framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("ManagedClusterSet %s: %s", name, what), func(ctx context.Context) (bool, error) {
			set := &clusterv1beta2.ManagedClusterSet{}
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
				return false, err
			}
			return ok(set), nil
		})
	}
	emptyIs := func(status metav1.ConditionStatus, reason string) func(*clusterv1beta2.ManagedClusterSet) bool {
		return func(s *clusterv1beta2.ManagedClusterSet) bool {
			c := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
			return c != nil && c.Status == status && c.Reason == reason
		}
	}
	waitSet("default", "exclusive, clusters selected", func(s *clusterv1beta2.ManagedClusterSet) bool {
		return s.Spec.ClusterSelector.SelectorType == clusterv1beta2.ExclusiveClusterSetLabel &&
			emptyIs(metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected)(s)
	})
	waitSet("global", "label selector {}, clusters selected", func(s *clusterv1beta2.ManagedClusterSet) bool {
		return s.Spec.ClusterSelector.SelectorType == clusterv1beta2.LabelSelector &&
			emptyIs(metav1.ConditionFalse, clusterv1beta2.ReasonClustersSelected)(s)
	})

	// Drift on a built-in set is reverted.
	global := &clusterv1beta2.ManagedClusterSet{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "global"}, global); err != nil {
		t.Fatal(err)
	}
	base := global.DeepCopy()
	global.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}
	if err := admin.Patch(ctx, global, client.MergeFrom(base)); err != nil {
		t.Fatalf("edit global set: %v", err)
	}
	waitSet("global", "spec rolled back", func(s *clusterv1beta2.ManagedClusterSet) bool {
		return s.Spec.ClusterSelector.SelectorType == clusterv1beta2.LabelSelector
	})

	empty := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}
	if err := admin.Create(ctx, empty); err != nil {
		t.Fatalf("create set: %v", err)
	}
	waitSet("empty", "ClusterSetEmpty True", emptyIs(metav1.ConditionTrue, clusterv1beta2.ReasonNoClusterMatched))

	t.Run("invalid selectors", func(t *testing.T) { testInvalidSelectors(ctx, t, admin, waitSet) })

	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "missing"} {
		b := &clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: name},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: name},
		}
		if err := admin.Create(ctx, b); err != nil {
			t.Fatalf("create binding %s: %v", name, err)
		}
	}
	waitBinding := func(name string, status metav1.ConditionStatus, reason string) {
		t.Helper()
		framework.Eventually(ctx, t, pollTimeout, "binding "+name+" "+reason, func(ctx context.Context) (bool, error) {
			b := &clusterv1beta2.ManagedClusterSetBinding{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: name}, b); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType)
			return c != nil && c.Status == status && c.Reason == reason, nil
		})
	}
	waitBinding("default", metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound)
	waitBinding("missing", metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound)
	if err := admin.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}); err != nil {
		t.Fatal(err)
	}
	waitBinding("missing", metav1.ConditionTrue, clusterv1beta2.ReasonClusterSetBound)
}

// testInvalidSelectors checks that admission rejects a label selector with an
// unknown operator or misplaced values, and that a selector only the
// controller can find invalid (a bad label key) is reported on the set.
func testInvalidSelectors(ctx context.Context, t *testing.T, admin client.Client,
	waitSet func(name, what string, ok func(*clusterv1beta2.ManagedClusterSet) bool)) {
	t.Helper()
	labelSet := func(name string, sel *metav1.LabelSelector) *clusterv1beta2.ManagedClusterSet {
		return &clusterv1beta2.ManagedClusterSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType: clusterv1beta2.LabelSelector, LabelSelector: sel,
			}},
		}
	}
	rejected := []struct {
		name string
		req  metav1.LabelSelectorRequirement
		want string
	}{
		{name: "bad-operator", req: metav1.LabelSelectorRequirement{Key: "env", Operator: "Bogus"}, want: "operator must be one of"},
		{name: "in-without-values", req: metav1.LabelSelectorRequirement{Key: "env", Operator: metav1.LabelSelectorOpIn}, want: "In and NotIn need values"},
		{name: "exists-with-values", req: metav1.LabelSelectorRequirement{Key: "env", Operator: metav1.LabelSelectorOpExists, Values: []string{"x"}}, want: "take none"},
	}
	for _, tt := range rejected {
		sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{tt.req}}
		err := admin.Create(ctx, labelSet(tt.name, sel))
		assert.ErrorContains(t, err, tt.want)
	}

	bad := labelSet("bad-key", &metav1.LabelSelector{MatchLabels: map[string]string{"not a key!": "x"}})
	if err := admin.Create(ctx, bad); err != nil {
		t.Fatalf("create set with a bad label key: %v", err)
	}
	waitSet("bad-key", "ClusterSetEmpty True InvalidClusterSelector", func(s *clusterv1beta2.ManagedClusterSet) bool {
		c := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == clusterv1beta2.ReasonInvalidClusterSelector &&
			strings.Contains(c.Message, "not a key!") && c.ObservedGeneration == s.Generation
	})
	base := bad.DeepCopy()
	bad.Spec.ClusterSelector.LabelSelector = &metav1.LabelSelector{}
	if err := admin.Patch(ctx, bad, client.MergeFrom(base)); err != nil {
		t.Fatalf("fix set selector: %v", err)
	}
	waitSet("bad-key", "fixed selector selects clusters", func(s *clusterv1beta2.ManagedClusterSet) bool {
		c := meta.FindStatusCondition(s.Status.Conditions, clusterv1beta2.ManagedClusterSetConditionEmpty)
		return c != nil && c.Reason == clusterv1beta2.ReasonClustersSelected
	})
}
