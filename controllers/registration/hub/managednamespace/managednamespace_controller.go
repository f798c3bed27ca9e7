package managednamespace

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Reconciler keeps each ManagedCluster's status.managedNamespaces equal to
// the managed namespaces of its sets.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// The clusters' sets are read from the cache; only the status is written.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=patch

// SetupWithManager registers the reconciler. A cluster is reconciled when
// it is created, when its labels change (its sets may change) and when
// anything but the conditions of its status.managedNamespaces changes there
// (what the hub writes is restored); a set's change reconciles the clusters
// it selects and those that hold namespaces of it (a change of its spec:
// its status is not read).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managednamespace").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.Or(
			predicate.LabelChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				before, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
				after, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
				return ok1 && ok2 && !slices.Equal(keys(before.Status.ManagedNamespaces), keys(after.Status.ManagedNamespaces))
			}},
		))).
		// A set's status (its member count, written as clusters join) is
		// not read: only its spec changes what its clusters hold. Without
		// this filter every join reconciled every member of its sets.
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSet),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// clustersOfSet returns the clusters set selects and those whose status
// holds a namespace of set: a set that stops selecting a cluster, changes
// its namespaces or goes away changes both.
func (r *Reconciler) clustersOfSet(ctx context.Context, obj client.Object) []reconcile.Request {
	set, ok := obj.(*clusterv1beta2.ManagedClusterSet)
	if !ok {
		return nil
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusters")
		return nil
	}
	sel, err := set.Spec.ClusterSelector.Selector(set.Name)
	if err != nil {
		sel = labels.Nothing()
	}
	var out []reconcile.Request
	for i := range clusters.Items {
		mc := &clusters.Items[i]
		holds := slices.ContainsFunc(mc.Status.ManagedNamespaces, func(n clusterv1.ClusterSetManagedNamespaceConfig) bool { return n.ClusterSet == set.Name })
		if holds || sel.Matches(labels.Set(mc.Labels)) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mc)})
		}
	}
	return out
}

// Reconcile writes the cluster's managed namespaces with one status patch,
// only when they changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ManagedClusterSets: %w", err)
	}
	desired := Desired(mc, sets.Items)
	if equality.Semantic.DeepEqual(desired, mc.Status.ManagedNamespaces) {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(mc, r.Client)
	mc.Status.ManagedNamespaces = desired
	if err := h.Patch(ctx, mc); err != nil {
		return ctrl.Result{}, fmt.Errorf("update the managed namespaces of ManagedCluster %s: %w", mc.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Managed namespaces updated", "managedNamespaces", keys(desired))
	return ctrl.Result{}, nil
}

// Desired returns the status.managedNamespaces of mc given every set: one
// entry per namespace of each set that selects mc and is not being deleted,
// sorted by set and then by namespace, keeping the conditions the agent
// reported on entries mc already holds. A set whose selector cannot be
// evaluated selects no cluster.
func Desired(mc *clusterv1.ManagedCluster, sets []clusterv1beta2.ManagedClusterSet) []clusterv1.ClusterSetManagedNamespaceConfig {
	var out []clusterv1.ClusterSetManagedNamespaceConfig
	for i := range sets {
		set := &sets[i]
		if !set.DeletionTimestamp.IsZero() || len(set.Spec.ManagedNamespaces) == 0 {
			continue
		}
		sel, err := set.Spec.ClusterSelector.Selector(set.Name)
		if err != nil || !sel.Matches(labels.Set(mc.Labels)) {
			continue
		}
		for _, ns := range set.Spec.ManagedNamespaces {
			entry := clusterv1.ClusterSetManagedNamespaceConfig{ManagedNamespaceConfig: ns, ClusterSet: set.Name}
			if i := slices.IndexFunc(mc.Status.ManagedNamespaces, func(n clusterv1.ClusterSetManagedNamespaceConfig) bool {
				return n.ClusterSet == set.Name && n.Name == ns.Name
			}); i >= 0 {
				entry.Conditions = mc.Status.ManagedNamespaces[i].Conditions
			}
			out = append(out, entry)
		}
	}
	slices.SortFunc(out, func(a, b clusterv1.ClusterSetManagedNamespaceConfig) int {
		return cmp.Or(cmp.Compare(a.ClusterSet, b.ClusterSet), cmp.Compare(a.Name, b.Name))
	})
	return slices.CompactFunc(out, func(a, b clusterv1.ClusterSetManagedNamespaceConfig) bool {
		return a.ClusterSet == b.ClusterSet && a.Name == b.Name
	})
}

// keys returns the set/namespace of each entry.
func keys(entries []clusterv1.ClusterSetManagedNamespaceConfig) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.ClusterSet+"/"+e.Name)
	}
	return out
}
