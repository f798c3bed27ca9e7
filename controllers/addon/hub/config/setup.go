package config

import (
	"context"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// The controller reads from the cache, patches the status of
// ClusterManagementAddOns and ManagedClusterAddOns, and records events.
// Configuration objects of other kinds than these two are read from the API
// server with the permissions the hub admin grants for them.
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons;managedclusteraddons,verbs=list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons/status;managedclusteraddons/status,verbs=patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addondeploymentconfigs;addontemplates,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers r with mgr. Besides ClusterManagementAddOns it
// watches their ManagedClusterAddOns, install Placements and their
// PlacementDecisions, the ManagedClusters of ManagedClusterAddOns,
// AddOnDeploymentConfigs and AddOnTemplates, the metadata of
// CustomResourceDefinitions (a configuration kind becoming served), and,
// from the first time one is read, the metadata of every other
// configuration kind.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := lookup.Register(context.Background(), mgr); err != nil {
		return err
	}
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
	})
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&addonv1alpha1.ClusterManagementAddOn{}).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byName).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return lookup.UsingPlacement(ctx, r.Client, o.GetNamespace(), o.GetName())
		})).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[clusterv1beta1.PlacementLabel]; name != "" {
				return lookup.UsingPlacement(ctx, r.Client, o.GetNamespace(), name)
			}
			return nil
		})).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.addonsOfCluster), builder.WithPredicates(availabilityChanged)).
		Watches(builtinKind(addonv1alpha1.AddOnDeploymentConfigResource), r.byConfig(builtin(addonv1alpha1.AddOnDeploymentConfigResource))).
		Watches(builtinKind(addonv1alpha1.AddOnTemplateResource), r.byConfig(builtin(addonv1alpha1.AddOnTemplateResource))).
		WatchesMetadata(crds, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return lookup.UsingConfig(ctx, r.Client, o.GetName())
		})).
		Build(r)
	if err != nil {
		return fmt.Errorf("set up the add-on configuration controller: %w", err)
	}
	r.kinds = &kindWatches{controller: c, cache: mgr.GetCache(), handler: r.byConfig, watched: map[schema.GroupVersionKind]bool{}}
	return nil
}

// builtin is the built-in configuration kind of resource.
func builtin(resource string) addonv1alpha1.ConfigGroupResource {
	return addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: resource}
}

// builtinKind is an unstructured object of the built-in configuration kind
// of resource, at the version the reconciler reads and hashes it.
func builtinKind(resource string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonconfig.BuiltinKind(resource))
	return u
}

// byConfig returns the handler of the configurations of kind gr: it
// enqueues the add-ons that reference the changed object.
func (r *Reconciler) byConfig(gr addonv1alpha1.ConfigGroupResource) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		key := addonconfig.Key{ConfigGroupResource: gr, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: o.GetNamespace(), Name: o.GetName()}}
		return lookup.UsingConfig(ctx, r.Client, key.String())
	})
}

// addonsOfCluster enqueues the add-ons with a ManagedClusterAddOn in the
// namespace of a ManagedCluster whose availability may have changed.
func (r *Reconciler) addonsOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetName())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns of a cluster", "cluster", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: list.Items[i].Name}})
	}
	return out
}

// availabilityChanged passes creates, deletes and the updates of a
// ManagedCluster that change whether it is Available.
var availabilityChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	available := func(o client.Object) bool {
		mc, ok := o.(*clusterv1.ManagedCluster)
		return ok && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	}
	return available(e.ObjectOld) != available(e.ObjectNew)
}}

// kindWatches starts a metadata watch of a configuration kind the first
// time an object of it is read.
type kindWatches struct {
	controller controller.Controller
	cache      cache.Cache
	handler    func(addonv1alpha1.ConfigGroupResource) handler.EventHandler

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

// watch starts watching the metadata of kind gvk (resource gr) unless it is
// watched already.
func (k *kindWatches) watch(gvk schema.GroupVersionKind, gr addonv1alpha1.ConfigGroupResource) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.watched[gvk] {
		return
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	if err := k.controller.Watch(source.Kind[client.Object](k.cache, obj, k.handler(gr))); err != nil {
		ctrl.Log.WithName(ControllerName).Error(err, "Watch configuration kind", "kind", gvk.String())
		return
	}
	k.watched[gvk] = true
}
