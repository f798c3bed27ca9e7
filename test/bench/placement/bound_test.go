package placement

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// boundGroup is the API group of the lower bound's copies of the Placement
// and PlacementDecision CRDs: the same schemas on the same API server, which
// no controller watches.
const boundGroup = "bound.bench.ocm.io"

// installBoundCRDs installs the Placement and PlacementDecision CRDs again
// under boundGroup and waits until both are established.
func installBoundCRDs(ctx context.Context, b *testing.B, c client.Client) {
	b.Helper()
	for _, name := range []string{"placements", "placementdecisions"} {
		crd, err := config.CRD(name + "." + clusterv1beta1.GroupVersion.Group)
		if err != nil {
			b.Fatal(err)
		}
		crd.Name = name + "." + boundGroup
		crd.Spec.Group = boundGroup
		crd.ResourceVersion = ""
		if err := c.Create(ctx, crd); err != nil {
			b.Fatalf("create CRD %s: %v", crd.Name, err)
		}
		if err := apply.WaitForCRDs(ctx, c, []string{crd.Name}, 30*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// asBound returns obj as an unstructured object of kind in boundGroup.
func asBound(b *testing.B, obj runtime.Object, kind string) *unstructured.Unstructured {
	b.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(boundGroup + "/" + clusterv1beta1.GroupVersion.Version)
	u.SetKind(kind)
	return u
}

// rawBound is the raw-client lower bound of a schedule phase: a bare client
// makes, for count placements of n clusters, the writes the hub makes to
// schedule them, in a new namespace ns of the bound's CRDs, -concurrency
// placements at a time, each placement's writes in sequence: the Placement
// create (the benchmark's own), the PlacementDecision create, its status
// update with n decisions, and the Placement's status as a merge patch with
// its resourceVersion. It returns the time from the first create to the last
// write returning.
func rawBound(ctx context.Context, b *testing.B, c client.Client, ns string, count int, n int32) time.Duration {
	b.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	decisions := make([]clusterv1beta1.ClusterDecision, n)
	for i := range decisions {
		decisions[i] = clusterv1beta1.ClusterDecision{ClusterName: clusterName(i)}
	}
	spec := ocmSpec(n)
	start := time.Now()
	err := parallel(count, func(i int) error {
		name := fmt.Sprintf("p-%d", i)
		p := asBound(b, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: *spec.DeepCopy()}, "Placement")
		if err := c.Create(ctx, p); err != nil {
			return fmt.Errorf("create placement %s: %w", name, err)
		}
		decisionName := clusterv1beta1.PlacementDecisionName(name, 1)
		d := asBound(b, &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: decisionName,
			Labels: map[string]string{
				clusterv1beta1.PlacementLabel:          name,
				clusterv1beta1.DecisionGroupIndexLabel: "0",
				clusterv1beta1.DecisionGroupNameLabel:  "",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: p.GetAPIVersion(), Kind: "Placement", Name: name, UID: p.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		}}, "PlacementDecision")
		if err := c.Create(ctx, d); err != nil {
			return fmt.Errorf("create decision %s: %w", decisionName, err)
		}
		if err := unstructured.SetNestedField(d.Object, toList(b, decisions), "status", "decisions"); err != nil {
			return err
		}
		if err := c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("status of decision %s: %w", decisionName, err)
		}
		status := clusterv1beta1.PlacementStatus{
			NumberOfSelectedClusters: n,
			DecisionGroups: []clusterv1beta1.DecisionGroupStatus{{
				DecisionGroupIndex: 0, Decisions: []string{decisionName}, ClustersCount: n,
			}},
		}
		now := metav1.Now()
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied,
			Status: metav1.ConditionTrue, Reason: clusterv1beta1.ReasonAllDecisionsScheduled, Message: "All cluster decisions scheduled", LastTransitionTime: now})
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured,
			Status: metav1.ConditionFalse, Reason: clusterv1beta1.ReasonSucceedconfigured, Message: "Placement configurations check pass", LastTransitionTime: now})
		before := p.DeepCopy()
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
		if err != nil {
			return err
		}
		p.Object["status"] = st
		if err := c.Status().Patch(ctx, p, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("status of placement %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// toList converts typed decisions into the []any an unstructured object
// holds.
func toList(b *testing.B, decisions []clusterv1beta1.ClusterDecision) []any {
	b.Helper()
	out := make([]any, len(decisions))
	for i := range decisions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&decisions[i])
		if err != nil {
			b.Fatal(err)
		}
		out[i] = m
	}
	return out
}

// ratio formats ours / bound.
func ratio(ours, bound time.Duration) string {
	return fmt.Sprintf("ratio %.2f×", ours.Seconds()/bound.Seconds())
}
