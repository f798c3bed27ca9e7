package placement

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	placementlib "github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// TestReconcileBehindItsWrites runs the scheduler while its cache does not
// show the PlacementDecisions it wrote, as on a busy hub: a later run must
// not write them again from the older version, neither a create
// (AlreadyExists) nor a status from the created version (a conflict), each
// a retry after patch.StaleRetry. The first write is also the last (the
// default prioritizers weigh Steady: settle): a status written with the
// scores before the decisions held would be written again once the cache
// shows them.
func TestReconcileBehindItsWrites(t *testing.T) {
	ctx := context.Background()
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "s"},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "s"}}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "p", Generation: 1},
		Spec: anyCluster().groupsBy("env", "prod").s}
	base := fake.NewClientBuilder().WithScheme(apis.Scheme).
		WithObjects(set, binding, mc("c1", "env", "prod").build(), mc("c2", "env", "dev").build(), p).
		WithStatusSubresource(&clusterv1beta1.Placement{}, &clusterv1beta1.PlacementDecision{}).
		WithIndex(&clusterv1beta1.PlacementDecision{}, decisionPlacementIndex, func(o client.Object) []string {
			return []string{o.GetLabels()[clusterv1beta1.PlacementLabel]}
		}).Build()

	// The cache shows the decisions as in frozen: none at first.
	frozen := map[string]*clusterv1beta1.PlacementDecision{}
	cache := interceptor.NewClient(base, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if l, ok := list.(*clusterv1beta1.PlacementDecisionList); ok {
				var items []clusterv1beta1.PlacementDecision
				for _, d := range l.Items {
					if old := frozen[d.Name]; old != nil {
						items = append(items, *old.DeepCopy())
					}
				}
				l.Items = items
			}
			return nil
		},
	})
	// The writes the scheduler sends, and each decision as created. Each
	// write's watch event reaches the scheduler's predicate before the
	// write's response does, as it may on a busy hub: it must be known as
	// the scheduler's own.
	creates, statuses := 0, 0
	created := map[string]*clusterv1beta1.PlacementDecision{}
	var pred predicate.Predicate
	foreign := 0
	writer := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			d, ok := obj.(*clusterv1beta1.PlacementDecision)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			creates++
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			created[d.Name] = d.DeepCopy()
			if pred.Create(event.CreateEvent{Object: d.DeepCopy()}) {
				foreign++
			}
			return nil
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			d, ok := obj.(*clusterv1beta1.PlacementDecision)
			if !ok {
				return c.SubResource(sub).Update(ctx, obj, opts...)
			}
			statuses++
			old := &clusterv1beta1.PlacementDecision{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), old); err != nil {
				return err
			}
			if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
				return err
			}
			if pred.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: d.DeepCopy()}) {
				foreign++
			}
			return nil
		},
	})
	r := &Reconciler{Client: cache, Writer: writer, Scheduler: placementlib.NewScheduler(),
		decisions: newDecisionAggregate(), own: newOwnWrites(), index: newPlacementIndex()}
	pred = r.notOwnWrite()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: appsNS, Name: "p"}}
	reconcileP := func() reconcile.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		require.NoError(t, err)
		return res
	}

	reconcileP()
	require.Equal(t, 2, creates, "a decision per group")
	require.Equal(t, 2, statuses, "each decision's status")
	require.Equal(t, 2, r.written.Len())
	assert.Zero(t, foreign, "the scheduler's own writes taken for someone else's")

	// The cache shows nothing, then the decisions as created, without
	// their status: nothing is written again.
	for _, view := range []map[string]*clusterv1beta1.PlacementDecision{{}, created} {
		frozen = view
		res := reconcileP()
		assert.NotEqual(t, patch.StaleRetry, res.RequeueAfter, "a stale cache found")
		assert.Equal(t, 2, creates, "decisions created again while the cache does not show them")
		assert.Equal(t, 2, statuses, "statuses written again from the created versions")
	}

	// The cache catches up: the writes are forgotten.
	list := &clusterv1beta1.PlacementDecisionList{}
	require.NoError(t, base.List(ctx, list))
	frozen = map[string]*clusterv1beta1.PlacementDecision{}
	for i := range list.Items {
		frozen[list.Items[i].Name] = &list.Items[i]
	}
	reconcileP()
	assert.Zero(t, r.written.Len(), "writes the cache shows")
	assert.Equal(t, 2, creates)
	assert.Equal(t, 2, statuses)
	for _, d := range list.Items {
		assert.Len(t, d.Status.Decisions, 1, "decision %s", d.Name)
	}

	// A change of cluster: c2 joins the canary group, the only group left.
	// Its decision is written once, though the cache keeps the versions
	// before, and the other is deleted.
	c2 := mc("c2", "env", "prod").build()
	current := &clusterv1.ManagedCluster{}
	require.NoError(t, base.Get(ctx, client.ObjectKeyFromObject(c2), current))
	current.Labels = c2.Labels
	require.NoError(t, base.Update(ctx, current))
	reconcileP()
	assert.Equal(t, 3, statuses, "the canary decision's status once")
	assert.Zero(t, foreign, "the scheduler's own writes taken for someone else's")
	reconcileP()
	assert.Equal(t, 3, statuses, "status written again from the version before")
	assert.Equal(t, 2, creates)
	assert.True(t, apierrors.IsNotFound(base.Get(ctx, types.NamespacedName{Namespace: appsNS, Name: "p-decision-2"}, &clusterv1beta1.PlacementDecision{})))

	// A placement that is gone drops its writes.
	require.Equal(t, 1, r.written.Len())
	require.NoError(t, base.Delete(ctx, p))
	reconcileP()
	assert.Zero(t, r.written.Len(), "writes of a placement that is gone")
}

// TestSameDecisions: a score that changed alone is not a change.
func TestSameDecisions(t *testing.T) {
	d := func(name string, score int64) clusterv1beta1.ClusterDecision {
		return clusterv1beta1.ClusterDecision{ClusterName: name, Score: score}
	}
	a := []clusterv1beta1.ClusterDecision{d("c1", 100), d("c2", 100)}
	assert.True(t, sameDecisions(a, []clusterv1beta1.ClusterDecision{d("c1", 200), d("c2", 50)}), "scores alone")
	assert.False(t, sameDecisions(a, []clusterv1beta1.ClusterDecision{d("c2", 100), d("c1", 100)}), "another order")
	assert.False(t, sameDecisions(a, []clusterv1beta1.ClusterDecision{d("c1", 100)}), "a cluster less")
	assert.True(t, sameDecisions(nil, []clusterv1beta1.ClusterDecision{}), "nil and empty")
}
