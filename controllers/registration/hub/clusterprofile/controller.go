package clusterprofile

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Reconciler keeps the ClusterProfiles of each namespace equal to the
// members of the ManagedClusterSets bound to it. A request names one
// profile: the namespace it is in and the cluster it is of. A cluster's
// change reconciles its profiles alone, one per namespace with a binding,
// so the cost of an event does not grow with the fleet; only a binding or a
// set change reconciles every cluster's profile of the namespaces it
// concerns. It touches only the profiles labeled with
// x-k8s.io/cluster-manager=open-cluster-management.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Tunnel, when set, adds the hub tunnel's access provider to every
	// profile.
	Tunnel *Tunnel
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch

// SetupWithManager registers the reconciler: a profile reconciles itself, a
// cluster its profile in every namespace with a binding, a binding every
// profile of its namespace, a set every profile of the namespaces it is
// bound to.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterprofile").
		Watches(&multiclusterv1alpha1.ClusterProfile{}, &handler.EnqueueRequestForObject{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.profilesOfCluster)).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(r.profilesOfBinding)).
		// A set's status (its member count, written as clusters join) is
		// not exported: only its spec changes the profiles. Without this
		// filter every join reconciled every profile of its sets.
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.profilesOfSet),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// boundNamespaces returns the namespaces holding a binding, of set only
// when set is not empty.
func (r *Reconciler) boundNamespaces(ctx context.Context, set string) []string {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSetBindings")
		return nil
	}
	var out []string
	for i := range list.Items {
		b := &list.Items[i]
		if (set == "" || b.Spec.ClusterSet == set) && !slices.Contains(out, b.Namespace) {
			out = append(out, b.Namespace)
		}
	}
	return out
}

// profilesOfCluster enqueues the cluster's profile in every namespace with
// a binding (the cluster may have joined or left any set).
func (r *Reconciler) profilesOfCluster(ctx context.Context, cluster client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ns := range r.boundNamespaces(ctx, "") {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: cluster.GetName()}})
	}
	return out
}

// profilesOfBinding enqueues every profile its namespace may have.
func (r *Reconciler) profilesOfBinding(ctx context.Context, binding client.Object) []reconcile.Request {
	return r.profilesIn(ctx, binding.GetNamespace())
}

// profilesOfSet enqueues every profile of the namespaces set is bound to.
func (r *Reconciler) profilesOfSet(ctx context.Context, set client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, ns := range r.boundNamespaces(ctx, set.GetName()) {
		out = append(out, r.profilesIn(ctx, ns)...)
	}
	return out
}

// profilesIn returns a request for every cluster's profile in ns and for
// every profile there (that of a cluster gone, to delete).
func (r *Reconciler) profilesIn(ctx context.Context, ns string) []reconcile.Request {
	names := map[string]bool{}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusters")
	}
	for i := range clusters.Items {
		names[clusters.Items[i].Name] = true
	}
	profiles := &multiclusterv1alpha1.ClusterProfileList{}
	if err := r.Client.List(ctx, profiles, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ClusterProfiles", "namespace", ns)
	}
	for i := range profiles.Items {
		names[profiles.Items[i].Name] = true
	}
	out := make([]reconcile.Request, 0, len(names))
	for name := range names {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	}
	return out
}

// Reconcile creates, updates or deletes the profile of cluster req.Name in
// namespace req.Namespace.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns, name := req.Namespace, req.Name
	cluster, set, err := r.exportedThrough(ctx, ns, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &multiclusterv1alpha1.ClusterProfile{}
	err = r.Client.Get(ctx, req.NamespacedName, p)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("get ClusterProfile %s/%s: %w", ns, name, err)
	}
	switch {
	case exists && !IsManaged(p):
		if cluster != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Leaving a ClusterProfile of another cluster manager alone", "namespace", ns, "name", name)
		}
		return ctrl.Result{}, nil
	case cluster == nil:
		if exists && p.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("delete ClusterProfile %s/%s: %w", ns, name, err)
			}
		}
		return ctrl.Result{}, nil
	case !exists:
		if p, err = r.create(ctx, ns, member{cluster: cluster, set: set}); err != nil {
			return ctrl.Result{}, err
		}
	}
	return patch.RetryStale(ctx, r.update(ctx, p, member{cluster: cluster, set: set}), apierrors.IsNotFound)
}

// member is a cluster exported to a namespace, and the set it is exported
// through.
type member struct {
	cluster *clusterv1.ManagedCluster
	set     string
}

// exportedThrough returns the cluster named name and the set it is exported
// to ns through, or a nil cluster when it is not exported there (it does
// not exist, is being deleted, or no set bound to ns selects it). A cluster
// in several bound sets is exported through the first set in name order.
func (r *Reconciler) exportedThrough(ctx context.Context, ns, name string) (*clusterv1.ManagedCluster, string, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("get ManagedCluster %s: %w", name, err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return nil, "", nil
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(ns)); err != nil {
		return nil, "", fmt.Errorf("list ManagedClusterSetBindings in %s: %w", ns, err)
	}
	sets := make([]string, 0, len(bindings.Items))
	for i := range bindings.Items {
		if b := &bindings.Items[i]; b.DeletionTimestamp.IsZero() && b.Spec.ClusterSet != "" {
			sets = append(sets, b.Spec.ClusterSet)
		}
	}
	slices.Sort(sets)
	for _, set := range slices.Compact(sets) {
		sel, err := r.selector(ctx, set)
		if err != nil {
			return nil, "", err
		}
		if sel.Matches(labels.Set(cluster.Labels)) {
			return cluster, set, nil
		}
	}
	return nil, "", nil
}

// selector returns the selector of the members of set name, or one that
// selects nothing when the set does not exist or is being deleted.
func (r *Reconciler) selector(ctx context.Context, name string) (labels.Selector, error) {
	set := &clusterv1beta2.ManagedClusterSet{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, set)
	if apierrors.IsNotFound(err) || (err == nil && !set.DeletionTimestamp.IsZero()) {
		return labels.Nothing(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("get ManagedClusterSet %s: %w", name, err)
	}
	sel, err := set.Spec.ClusterSelector.Selector(set.Name)
	if err != nil {
		// An invalid selector exports nothing until the set is fixed; the set
		// controller reports it.
		ctrl.LoggerFrom(ctx).Info("Not exporting a ManagedClusterSet with an invalid selector", "set", name, "error", err.Error())
		return labels.Nothing(), nil
	}
	return sel, nil
}

// create creates the profile of m in ns, without status.
func (r *Reconciler) create(ctx context.Context, ns string, m member) (*multiclusterv1alpha1.ClusterProfile, error) {
	p := &multiclusterv1alpha1.ClusterProfile{}
	p.Namespace, p.Name = ns, m.cluster.Name
	p.Labels = Labels(m.set)
	p.Spec = Spec(m.cluster)
	if err := r.Client.Create(ctx, p); err != nil {
		return nil, fmt.Errorf("create ClusterProfile %s/%s: %w", ns, p.Name, err)
	}
	return p, nil
}

// update patches the labels, spec and status of p to those of m, sending
// only what changed.
func (r *Reconciler) update(ctx context.Context, p *multiclusterv1alpha1.ClusterProfile, m member) error {
	h := patch.NewHelper(p, r.Client)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	for k, v := range Labels(m.set) {
		p.Labels[k] = v
	}
	p.Spec.DisplayName = Spec(m.cluster).DisplayName
	SetStatus(&p.Status, m.cluster, r.Tunnel)
	if err := h.Patch(ctx, p); err != nil {
		return fmt.Errorf("patch ClusterProfile %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
