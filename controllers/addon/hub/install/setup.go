package install

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// The controller reads from the cache and creates, patches (owner
// references, cluster annotations) and deletes ManagedClusterAddOns. Their blocking owner
// reference to the ClusterManagementAddOn needs update on its finalizers
// where the OwnerReferencesPermissionEnforcement admission plugin runs.
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons,verbs=list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons/finalizers,verbs=update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch

// SetupWithManager registers r with mgr. Besides ClusterManagementAddOns it
// watches their ManagedClusterAddOns, the Placements and PlacementDecisions
// they install by, the ManagedClusters and cluster namespaces a
// ManagedClusterAddOn may wait for, and the add-on annotations of
// ManagedClusters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := lookup.Register(context.Background(), mgr); err != nil {
		return err
	}
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&addonv1alpha1.ClusterManagementAddOn{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byName).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return lookup.UsingPlacement(ctx, r.Client, o.GetNamespace(), o.GetName())
		}), builder.WithPredicates(noUpdates)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[clusterv1beta1.PlacementLabel]; name != "" {
				return lookup.UsingPlacement(ctx, r.Client, o.GetNamespace(), name)
			}
			return nil
		})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.installedByPlacements),
			builder.WithPredicates(predicate.Or(lifecycle, addonAnnotationsChange))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.installedByPlacements),
			builder.WithPredicates(lifecycle)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the add-on install controller: %w", err)
	}
	return nil
}

var (
	// noUpdates passes creates and deletes.
	noUpdates = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
	// lifecycle passes creates, deletes and the updates that start a deletion.
	lifecycle = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
	// addonAnnotationsChange passes the updates that change the add-on
	// annotations of a ManagedCluster.
	addonAnnotationsChange = predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return addonAnnotationsChanged(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		},
	}
)

// installedByPlacements returns every ClusterManagementAddOn installed by
// Placements, the only install strategy besides Manual: a cluster or its
// namespace appeared or is going away, or the add-on annotations of a
// cluster changed.
func (r *Reconciler) installedByPlacements(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ClusterManagementAddOns")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.InstallStrategy.Type == addonv1alpha1.InstallStrategyPlacements {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
		}
	}
	return out
}
