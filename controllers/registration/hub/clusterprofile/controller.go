package clusterprofile

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Reconciler keeps the ClusterProfiles of each namespace equal to the
// members of the ManagedClusterSets bound to it. Its requests name a
// namespace (request.Name); it touches only the profiles labeled with
// x-k8s.io/cluster-manager=open-cluster-management.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch

// SetupWithManager registers the reconciler: a binding or a profile
// reconciles its namespace, a set the namespaces it is bound to, a cluster
// every namespace with a binding.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterprofile").
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(namespaceOf)).
		Watches(&multiclusterv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(namespaceOf)).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.boundNamespaces)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.boundNamespaces)).
		Complete(r)
}

// namespaceOf enqueues the namespace of obj.
func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
}

// boundNamespaces enqueues every namespace holding a binding. A set change
// could narrow this to the set's bindings, but a cluster's relabeling moves
// it between any sets, so both use the one mapping.
func (r *Reconciler) boundNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSetBindings")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Namespace}}
		if !slices.Contains(out, req) {
			out = append(out, req)
		}
	}
	return out
}

// member is a cluster exported to a namespace, and the set it is exported
// through.
type member struct {
	cluster *clusterv1.ManagedCluster
	set     string
}

// Reconcile creates, updates and deletes the profiles of namespace req.Name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	want, err := r.members(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	profiles := &multiclusterv1alpha1.ClusterProfileList{}
	if err := r.Client.List(ctx, profiles, client.InNamespace(ns)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ClusterProfiles in %s: %w", ns, err)
	}
	var errs []error
	existing := map[string]*multiclusterv1alpha1.ClusterProfile{}
	for i := range profiles.Items {
		p := &profiles.Items[i]
		existing[p.Name] = p
		if _, ok := want[p.Name]; ok || !IsManaged(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete ClusterProfile %s/%s: %w", ns, p.Name, err))
		}
	}
	for name, m := range want {
		p, ok := existing[name]
		if ok && !IsManaged(p) {
			ctrl.LoggerFrom(ctx).V(1).Info("Leaving a ClusterProfile of another cluster manager alone", "namespace", ns, "name", name)
			continue
		}
		if !ok {
			if p, err = r.create(ctx, ns, m); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := r.update(ctx, p, m); err != nil {
			errs = append(errs, err)
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// members returns the clusters exported to ns by name. A cluster in several
// bound sets is exported through the first set in name order.
func (r *Reconciler) members(ctx context.Context, ns string) (map[string]member, error) {
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ManagedClusterSetBindings in %s: %w", ns, err)
	}
	sets := make([]string, 0, len(bindings.Items))
	for i := range bindings.Items {
		if b := &bindings.Items[i]; b.DeletionTimestamp.IsZero() && b.Spec.ClusterSet != "" {
			sets = append(sets, b.Spec.ClusterSet)
		}
	}
	slices.Sort(sets)
	out := map[string]member{}
	if len(sets) == 0 {
		return out, nil
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	for _, name := range slices.Compact(sets) {
		sel, err := r.selector(ctx, name)
		if err != nil {
			return nil, err
		}
		for i := range clusters.Items {
			c := &clusters.Items[i]
			if _, done := out[c.Name]; done || !c.DeletionTimestamp.IsZero() || !sel.Matches(labels.Set(c.Labels)) {
				continue
			}
			out[c.Name] = member{cluster: c, set: name}
		}
	}
	return out, nil
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
	SetStatus(&p.Status, m.cluster)
	if err := h.Patch(ctx, p); err != nil {
		return fmt.Errorf("patch ClusterProfile %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
