package placement

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// clusterChanged passes the ManagedCluster events that can change a
// scheduling result: creation, deletion, and every update a CEL selector can
// read (all but resourceVersion and managedFields). clusterHandler then
// enqueues only the placements the change can affect: a heartbeat or an
// annotation reschedules the placements with CEL selectors alone.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
		n, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
		if !ok1 || !ok2 {
			return true
		}
		c := changeOf(o, n)
		return c.all || c.anything
	}}
}

// clusterHandler enqueues the placements whose decisions or status a
// ManagedCluster event can change (see clusterEvent.affects), among those of
// the namespaces bound to a set the cluster belongs to before or after the
// event (it may have left one set for another).
func (r *Reconciler) clusterHandler() handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], o, n client.Object) {
		old, _ := o.(*clusterv1.ManagedCluster)
		cur, _ := n.(*clusterv1.ManagedCluster)
		if old == nil && cur == nil {
			return
		}
		for _, req := range r.placementsOfCluster(ctx, old, cur) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, nil, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object, nil)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// Nothing says what changed: as if the cluster left and came back.
			enqueue(ctx, q, e.Object, nil)
			enqueue(ctx, q, nil, e.Object)
		},
	}
}

// placementsOfCluster returns the placements a ManagedCluster event can
// affect: the cluster was old before it (nil for a creation) and is cur
// after it (nil for a deletion).
func (r *Reconciler) placementsOfCluster(ctx context.Context, old, cur *clusterv1.ManagedCluster) []reconcile.Request {
	ev := clusterEvent{old: old, cur: cur}
	name := ""
	before, after := map[string]bool{}, map[string]bool{}
	if old != nil {
		name, before = old.Name, r.setsMatching(ctx, old.Labels)
	}
	if cur != nil {
		name, after = cur.Name, r.setsMatching(ctx, cur.Labels)
	}
	if old != nil && cur != nil {
		ev.change = changeOf(old, cur)
		ev.membership = !maps.Equal(before, after) || old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero()
	} else {
		ev.change, ev.membership = clusterChange{all: true}, true
	}
	ev.deciders = r.decisions.deciders(name)
	maps.Copy(after, before)
	return r.placementsOfSets(ctx, after, ev.affects)
}

// placementsOfScore enqueues the placements that may read an
// AddOnPlacementScore: those that can select its cluster (the score's
// namespace) or decide it, and use scores.
func (r *Reconciler) placementsOfScore(ctx context.Context, score client.Object) []reconcile.Request {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: score.GetNamespace()}, cluster); err != nil {
		return nil // a score of no cluster is read by no placement
	}
	deciders := r.decisions.deciders(cluster.Name)
	return r.placementsOfSets(ctx, r.setsMatching(ctx, cluster.Labels), func(v indexView) bool {
		if !usesScores(v.placement) {
			return false
		}
		_, decides := deciders[types.NamespacedName{Namespace: v.placement.Namespace, Name: v.placement.Name}]
		return decides || v.filter.MayMatch(cluster)
	})
}

// setsMatching returns the names of the ManagedClusterSets that select a
// cluster with labels l.
func (r *Reconciler) setsMatching(ctx context.Context, l labels.Set) map[string]bool {
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSets")
		return map[string]bool{}
	}
	matched := map[string]bool{}
	for i := range sets.Items {
		sel, err := sets.Items[i].Spec.ClusterSelector.Selector(sets.Items[i].Name)
		if err != nil {
			continue // selects nothing the scheduler can use
		}
		if sel.Matches(l) {
			matched[sets.Items[i].Name] = true
		}
	}
	return matched
}

// everyPlacement is the filter of the events that affect every placement
// that may use a set.
func everyPlacement(indexView) bool { return true }

// placementsOfSet enqueues the placements that may use the ManagedClusterSet set.
func (r *Reconciler) placementsOfSet(ctx context.Context, set client.Object) []reconcile.Request {
	return r.placementsOfSets(ctx, map[string]bool{set.GetName(): true}, everyPlacement)
}

// placementsOfSets returns the placements of the namespaces bound to any of
// sets whose spec.clusterSets allow one of those bound sets, and that want.
func (r *Reconciler) placementsOfSets(ctx context.Context, sets map[string]bool, want func(indexView) bool) []reconcile.Request {
	if len(sets) == 0 {
		return nil
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSetBindings")
		return nil
	}
	boundIn := map[string][]string{} // namespace → bound sets among sets
	for _, b := range bindings.Items {
		if sets[b.Spec.ClusterSet] {
			boundIn[b.Namespace] = append(boundIn[b.Namespace], b.Spec.ClusterSet)
		}
	}
	var out []reconcile.Request
	for ns, bound := range boundIn {
		out = append(out, r.placementsIn(ns, bound, want)...)
	}
	return out
}

// placementsOfBinding enqueues the placements of a binding's namespace that
// may use its set.
func (r *Reconciler) placementsOfBinding(_ context.Context, binding client.Object) []reconcile.Request {
	b, ok := binding.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok {
		return nil
	}
	return r.placementsIn(b.Namespace, []string{b.Spec.ClusterSet}, everyPlacement)
}

// placementsIn returns the scheduled placements of namespace ns (those in
// the index) that may use one of sets (those without spec.clusterSets or
// naming one of them) and that want.
func (r *Reconciler) placementsIn(ns string, sets []string, want func(indexView) bool) []reconcile.Request {
	var out []reconcile.Request
	r.index.each(ns, sets, func(v indexView) {
		if want(v) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: v.placement.Namespace, Name: v.placement.Name}})
		}
	})
	return out
}

// placementOfDecision enqueues the placement a PlacementDecision is labeled with.
func placementOfDecision(_ context.Context, d client.Object) []reconcile.Request {
	name := d.GetLabels()[clusterv1beta1.PlacementLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: d.GetNamespace(), Name: name}}}
}

// notOwnWrite passes the PlacementDecision events that are not the echo of
// the scheduler's own writes (see ownWrites).
func (r *Reconciler) notOwnWrite() predicate.Predicate {
	own := func(o client.Object) bool {
		d, ok := o.(*clusterv1beta1.PlacementDecision)
		return ok && r.own.consume(d)
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !own(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !own(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool {
			return !r.own.consumeDelete(types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()})
		},
	}
}
