package placement

import (
	"context"
	"maps"
	"slices"

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

// clusterHandler enqueues the placements that may select a changed cluster,
// with its old and new labels (it may have left one set for another). An
// update that keeps the cluster's sets enqueues only the placements the
// change can affect (see clusterChange.affects).
func (r *Reconciler) clusterHandler() handler.EventHandler {
	all := func(*clusterv1beta1.Placement) bool { return true }
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object) {
		for _, req := range r.placementsOfSets(ctx, r.setsMatching(ctx, labels.Set(o.GetLabels())), all) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
			n, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
			if !ok1 || !ok2 {
				return
			}
			before, after := r.setsMatching(ctx, o.Labels), r.setsMatching(ctx, n.Labels)
			filter := changeOf(o, n).affects
			if !maps.Equal(before, after) {
				filter = all
			}
			maps.Copy(after, before)
			for _, req := range r.placementsOfSets(ctx, after, filter) {
				q.Add(req)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// placementsOfScore enqueues the placements that may read an
// AddOnPlacementScore: those that can select its cluster (the score's
// namespace) and use scores.
func (r *Reconciler) placementsOfScore(ctx context.Context, score client.Object) []reconcile.Request {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: score.GetNamespace()}, cluster); err != nil {
		return nil // a score of no cluster is read by no placement
	}
	return r.placementsOfSets(ctx, r.setsMatching(ctx, cluster.Labels), usesScores)
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

// placementsOfSet enqueues the placements that may use the ManagedClusterSet set.
func (r *Reconciler) placementsOfSet(ctx context.Context, set client.Object) []reconcile.Request {
	return r.placementsOfSets(ctx, map[string]bool{set.GetName(): true}, func(*clusterv1beta1.Placement) bool { return true })
}

// placementsOfSets returns the placements of the namespaces bound to any of
// sets whose spec.clusterSets allow one of those bound sets, and that want.
func (r *Reconciler) placementsOfSets(ctx context.Context, sets map[string]bool, want func(*clusterv1beta1.Placement) bool) []reconcile.Request {
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
		out = append(out, r.placementsIn(ctx, ns, bound, want)...)
	}
	return out
}

// placementsOfBinding enqueues the placements of a binding's namespace that
// may use its set.
func (r *Reconciler) placementsOfBinding(ctx context.Context, binding client.Object) []reconcile.Request {
	b, ok := binding.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok {
		return nil
	}
	return r.placementsIn(ctx, b.Namespace, []string{b.Spec.ClusterSet}, func(*clusterv1beta1.Placement) bool { return true })
}

// placementsIn returns the placements of namespace ns that may use one of
// sets (those without spec.clusterSets or naming one of them) that want.
func (r *Reconciler) placementsIn(ctx context.Context, ns string, sets []string, want func(*clusterv1beta1.Placement) bool) []reconcile.Request {
	list := &clusterv1beta1.PlacementList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List Placements", "namespace", ns)
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		if !want(p) {
			continue
		}
		if len(p.Spec.ClusterSets) > 0 && !slices.ContainsFunc(p.Spec.ClusterSets, func(s string) bool { return slices.Contains(sets, s) }) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
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
	key := func(o client.Object) types.NamespacedName {
		return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !r.own.consume(key(e.Object), e.Object.GetResourceVersion()) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !r.own.consume(key(e.ObjectNew), e.ObjectNew.GetResourceVersion())
		},
		DeleteFunc: func(e event.DeleteEvent) bool { return !r.own.consumeDelete(key(e.Object)) },
	}
}
