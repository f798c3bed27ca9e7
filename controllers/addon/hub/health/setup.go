package health

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// ManagedClusters: read, and their labels patched. ManagedClusterAddOns:
// read, status patched. ClusterManagementAddOns and ManifestWorks: read.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with mgr, filling in the
// fields left empty from it. Every event of a ManagedCluster, of an add-on
// or of an add-on's work (a hosting work: of the cluster of its add-on)
// brings its cluster back; a ClusterManagementAddOn
// brings back every cluster with its add-on.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
	})
	hasAddonLabel := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[addonv1alpha1.AddonLabelKey]
		return ok
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1.ManagedCluster{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byNamespace).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(workCluster), builder.WithPredicates(hasAddonLabel)).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.clustersWith)).
		Complete(r)
}

// workCluster maps an add-on's work to its cluster: the work's namespace,
// or for the hosting work of a hosted add-on the namespace its label
// open-cluster-management.io/addon-namespace names.
func workCluster(_ context.Context, o client.Object) []reconcile.Request {
	cluster, _ := template.WorkAddon(o.GetNamespace(), o.GetLabels())
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: cluster}}}
}

// clustersWith maps a ClusterManagementAddOn to the clusters with its add-on.
func (r *Reconciler) clustersWith(ctx context.Context, o client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Namespace}})
		}
	}
	return out
}
