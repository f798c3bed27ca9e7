package hub

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// testClusterSets checks the built-in sets, set status and binding status.
func testClusterSets(ctx context.Context, t *testing.T, admin client.Client) {
	waitSet := func(name, what string, ok func(*clusterv1beta2.ManagedClusterSet) bool) {
		t.Helper()
		poll(ctx, t, fmt.Sprintf("ManagedClusterSet %s: %s", name, what), func(ctx context.Context) (bool, error) {
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
		poll(ctx, t, "binding "+name+" "+reason, func(ctx context.Context) (bool, error) {
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
