package clusterset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// BindingReconciler reports whether the set of each ManagedClusterSetBinding exists.
type BindingReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch

// SetupWithManager registers the reconciler; a set change reconciles the
// bindings of that set.
func (r *BindingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clustersetbinding").
		For(&clusterv1beta2.ManagedClusterSetBinding{}).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf)).
		Complete(r)
}

// bindingsOf enqueues the bindings of set.
func (r *BindingReconciler) bindingsOf(ctx context.Context, set client.Object) []reconcile.Request {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterSetBindings")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.ClusterSet == set.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Reconcile sets the binding's Bound condition.
func (r *BindingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, binding); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	h := patch.NewHelper(binding, r.Client)
	cond := metav1.Condition{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue,
		Reason: clusterv1beta2.ReasonClusterSetBound, Message: "",
		ObservedGeneration: binding.Generation,
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: binding.Spec.ClusterSet}, set)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !set.DeletionTimestamp.IsZero()):
		cond.Status, cond.Reason = metav1.ConditionFalse, clusterv1beta2.ReasonClusterSetNotFound
		cond.Message = fmt.Sprintf("ManagedClusterSet %s does not exist", binding.Spec.ClusterSet)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get ManagedClusterSet %s: %w", binding.Spec.ClusterSet, err)
	default:
		cond.Message = fmt.Sprintf("ManagedClusterSet %s is bound to namespace %s", set.Name, binding.Namespace)
	}
	meta.SetStatusCondition(&binding.Status.Conditions, cond)
	return ctrl.Result{}, h.Patch(ctx, binding)
}
