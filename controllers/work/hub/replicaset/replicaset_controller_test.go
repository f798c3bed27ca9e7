package replicaset

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// fixture builds a fake hub with placement ns/p deciding clusters and an
// MWRS ns/rs with strategy.
// configMap is a ConfigMap manifest ns/name with data.v = value.
func configMap(ns, name, value string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"data":{"v":"` + value + `"}}`)}}
}

func fixture(strategy clusterv1alpha1.RolloutStrategy, overrides []workv1alpha1.ManifestWorkOverride, clusters ...string) (*Reconciler, client.Client) {
	pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-decision-1",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: "p", clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
	for _, c := range clusters {
		pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", Generation: 1},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("app", "cfg", "base")}}},
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: "p", RolloutStrategy: strategy}},
			Overrides:            overrides,
		},
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithIndex(&workv1.ManifestWork{}, ownerIndex, ownerKey).
		WithObjects(&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}, pd, mwrs).
		WithStatusSubresource(&workv1alpha1.ManifestWorkReplicaSet{}, &workv1.ManifestWork{}).Build()
	return &Reconciler{Client: c, Recorder: events.NewFakeRecorder(10)}, c
}

// reconcileOnce runs one reconcile of ns/rs.
func reconcileOnce(t *testing.T, r *Reconciler) ctrl.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "rs"}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// workClusters lists the clusters with a work of ns/rs.
func workClusters(t *testing.T, c client.Client) []string {
	t.Helper()
	list := &workv1.ManifestWorkList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "ns.rs"}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mw := range list.Items {
		out = append(out, mw.Namespace)
	}
	return out
}

// succeed marks the work of cluster Applied and Available.
func succeed(t *testing.T, c client.Client, cluster string, at time.Time) {
	t.Helper()
	mw := &workv1.ManifestWork{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: "rs"}, mw); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		meta.SetStatusCondition(&mw.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R",
			ObservedGeneration: mw.Generation, LastTransitionTime: metav1.NewTime(at)})
	}
	if err := c.Status().Update(context.Background(), mw); err != nil {
		t.Fatal(err)
	}
}

// condition returns the condition typ of ns/rs.
func condition(t *testing.T, c client.Client, typ string) *metav1.Condition {
	t.Helper()
	m := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "rs"}, m); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(m.Status.Conditions, typ)
}

func TestReconcile(t *testing.T) {
	one := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		MaxConcurrency: intstr.FromInt32(1), RolloutConfig: clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: time.Minute}}}}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "Progressive starts one, soaks, then the next", run: func(t *testing.T) {
			r, c := fixture(one, nil, "c1", "c2")
			now := time.Now()
			r.Now = func() time.Time { return now }
			reconcileOnce(t, r)
			if got := workClusters(t, c); strings.Join(got, ",") != "c1" {
				t.Fatalf("works on %v, want c1", got)
			}
			succeed(t, c, "c1", now.Add(time.Second))
			now = now.Add(2 * time.Second)
			if res := reconcileOnce(t, r); res.RequeueAfter <= 0 || res.RequeueAfter > time.Minute {
				t.Errorf("RequeueAfter %v, want the rest of minSuccessTime", res.RequeueAfter)
			}
			if got := workClusters(t, c); len(got) != 1 {
				t.Fatalf("works on %v during the soak, want c1 only", got)
			}
			now = now.Add(2 * time.Minute)
			reconcileOnce(t, r)
			if got := workClusters(t, c); len(got) != 2 {
				t.Fatalf("works on %v after the soak, want c1 and c2", got)
			}
			if cond := condition(t, c, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); cond == nil || cond.Reason != workv1alpha1.ReasonProgressing {
				t.Errorf("PlacementRolledOut %v, want Progressing", cond)
			}
		}},
		{name: "invalid override touches nothing", run: func(t *testing.T) {
			bad := []workv1alpha1.ManifestWorkOverride{{ClusterNames: []string{"c1"}, Patches: []workv1alpha1.ManifestPatch{{
				ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Resource: "secrets", Name: "x"},
				MergePatch:         runtime.RawExtension{Raw: []byte(`{}`)}}}}}
			r, c := fixture(clusterv1alpha1.RolloutStrategy{}, bad, "c1", "c2")
			reconcileOnce(t, r)
			if got := workClusters(t, c); len(got) != 0 {
				t.Errorf("works on %v, want none", got)
			}
			cond := condition(t, c, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)
			if cond == nil || cond.Reason != workv1alpha1.ReasonInvalidOverride || !strings.Contains(cond.Message, "overrides[0].patches[0]") {
				t.Errorf("ManifestworkApplied %v, want InvalidOverride naming the patch", cond)
			}
		}},
		{name: "All: every cluster at once, finalizer, PlacementVerified", run: func(t *testing.T) {
			r, c := fixture(clusterv1alpha1.RolloutStrategy{}, nil, "c1", "c2")
			reconcileOnce(t, r)
			if got := workClusters(t, c); len(got) != 2 {
				t.Fatalf("works on %v, want c1 and c2", got)
			}
			m := &workv1alpha1.ManifestWorkReplicaSet{}
			_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "rs"}, m)
			if cond := condition(t, c, workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified); cond == nil || cond.Status != metav1.ConditionTrue {
				t.Errorf("PlacementVerified %v, want True", cond)
			}
			if len(m.Finalizers) != 1 {
				t.Errorf("finalizers %v", m.Finalizers)
			}
		}},
		{name: "a cache behind the controller's writes: no create or update again", run: func(t *testing.T) {
			r, base := fixture(clusterv1alpha1.RolloutStrategy{}, nil, "c1", "c2", "c3")
			// The cache shows the works as they were before the
			// controller's writes: none at first, then the versions of
			// frozen.
			frozen := map[client.ObjectKey]*workv1.ManifestWork{}
			// The controller writes the works of a plan from parallel
			// workers.
			var creates, updates, gets atomic.Int32
			r.Client = interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if err := c.List(ctx, list, opts...); err != nil {
						return err
					}
					if l, ok := list.(*workv1.ManifestWorkList); ok {
						var items []workv1.ManifestWork
						for _, mw := range l.Items {
							if old := frozen[client.ObjectKeyFromObject(&mw)]; old != nil {
								items = append(items, *old.DeepCopy())
							}
						}
						l.Items = items
					}
					return nil
				},
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*workv1.ManifestWork); ok {
						creates.Add(1)
					}
					return c.Create(ctx, obj, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if _, ok := obj.(*workv1.ManifestWork); ok {
						updates.Add(1)
					}
					return c.Update(ctx, obj, opts...)
				},
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*workv1.ManifestWork); ok {
						gets.Add(1)
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			reconcileOnce(t, r)
			require.EqualValues(t, 3, creates.Load(), "one create per cluster")
			for range 2 {
				assert.Zero(t, reconcileOnce(t, r).RequeueAfter, "a stale cache found")
			}
			assert.EqualValues(t, 3, creates.Load(), "works created again while the cache does not show them")
			assert.Zero(t, gets.Load(), "works read to tell them from someone else's")
			assert.Equal(t, 3, r.written.Len(), "the creates the cache does not show")

			// The cache catches up: the writes are forgotten.
			list := &workv1.ManifestWorkList{}
			require.NoError(t, base.List(context.Background(), list))
			for i := range list.Items {
				frozen[client.ObjectKeyFromObject(&list.Items[i])] = list.Items[i].DeepCopy()
			}
			reconcileOnce(t, r)
			assert.Zero(t, r.written.Len(), "writes the cache shows")

			// A template change updates each work once, though the cache
			// still shows the versions before the update.
			m := &workv1alpha1.ManifestWorkReplicaSet{}
			require.NoError(t, base.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "rs"}, m))
			m.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap("app", "cfg", "changed")}
			require.NoError(t, base.Update(context.Background(), m))
			reconcileOnce(t, r)
			require.EqualValues(t, 3, updates.Load(), "one update per cluster")
			reconcileOnce(t, r)
			assert.EqualValues(t, 3, updates.Load(), "works updated again from the versions they replaced")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestListing maps a created ManifestChunk to the sets of its namespace
// whose template's payload lists it.
func TestListing(t *testing.T) {
	manifests := make([]workv1.Manifest, 3)
	for i := range manifests {
		manifests[i] = configMap("app", fmt.Sprintf("cm-%d", i), strings.Repeat(fmt.Sprint(i), 70<<10))
	}
	ref, chunks, err := payload.Split("app", manifests)
	require.NoError(t, err)
	require.Len(t, chunks, 3)
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	set := func(ns, name string, manifests ...workv1.Manifest) *workv1alpha1.ManifestWorkReplicaSet {
		return &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}}}}
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(
		set("ns", "large", m), set("ns", "small", configMap("app", "cfg", "v")), set("other", "large", m)).Build()
	r := &Reconciler{Client: c}
	chunk := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	tests := []struct {
		name  string
		chunk string
		want  []string
	}{
		{"a chunk the payload lists", chunks[1].Name(), []string{"ns/large"}},
		{"a chunk nothing lists", payload.ChunkName(payload.Digest([]byte("other\n"))), nil},
		{"not a chunk's name", "cfg", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, req := range r.listing(context.Background(), chunk(tt.chunk)) {
				got = append(got, req.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
