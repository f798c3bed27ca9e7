package rollout

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// The controller reads from the cache and patches ManagedClusterAddOn status.
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons;managedclusteraddons,verbs=list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch

// SetupWithManager registers r with mgr: it watches ManagedClusterAddOns,
// the ManifestWorks labeled with an add-on name, and
// ClusterManagementAddOns (their supported configurations and ownership).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := lookup.Register(context.Background(), mgr); err != nil {
		return err
	}
	hasAddon := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[addonv1alpha1.AddonLabelKey] != ""
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			cluster, addon := template.WorkAddon(o.GetNamespace(), o.GetLabels())
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cluster, Name: addon}}}
		}), builder.WithPredicates(hasAddon)).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.mcasOf)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the add-on rollout controller: %w", err)
	}
	return nil
}

// mcasOf returns the ManagedClusterAddOns of a ClusterManagementAddOn.
func (r *Reconciler) mcasOf(ctx context.Context, o client.Object) []reconcile.Request {
	mcas, err := lookup.MCAsOf(ctx, r.Client, o.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns")
		return nil
	}
	out := make([]reconcile.Request, 0, len(mcas))
	for i := range mcas {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&mcas[i])})
	}
	return out
}
