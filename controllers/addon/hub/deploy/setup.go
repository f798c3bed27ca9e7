package deploy

import (
	"context"
	"fmt"
	"maps"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Indexes of ManagedClusterAddOns in the cache.
const (
	// configIndex holds the desired configurations of an add-on (config.Key.String()).
	configIndex = "addon.deploy.desiredConfigs"
	// nameIndex holds the add-on's name.
	nameIndex = "addon.deploy.name"
	// hostingIndex holds the add-on's hosting cluster, in Hosted mode.
	hostingIndex = "addon.deploy.hostingCluster"
)

// ManagedClusterAddOns: read, finalizer and status patches; owners of the
// works and RoleBindings (blockOwnerDeletion needs update on finalizers).
// ClusterManagementAddOns, AddOnTemplates, AddOnDeploymentConfigs and
// ManagedClusters are read. The works and hub permission RoleBindings are
// written; binding a role needs bind on it.
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/finalizers,verbs=update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons;addontemplates;addondeploymentconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;roles,verbs=bind
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with mgr, filling in the
// fields left empty from it. Besides ManagedClusterAddOns it watches the
// add-ons' works and RoleBindings, the ClusterManagementAddOns, the
// AddOnTemplates and AddOnDeploymentConfigs they desire, the deletion of
// ManagedClusters (which releases a waiting pre-delete hook) and changes of
// their annotation open-cluster-management.io/image-registries, and the
// creation and deletion of the hosting clusters of hosted add-ons.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Configs == nil {
		r.Configs = mgr.GetCache()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	ctx := context.Background()
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &addonv1alpha1.ManagedClusterAddOn{}, configIndex, func(o client.Object) []string {
		return desiredKeys(o.(*addonv1alpha1.ManagedClusterAddOn))
	}); err != nil {
		return fmt.Errorf("index ManagedClusterAddOns by configuration: %w", err)
	}
	if err := indexer.IndexField(ctx, &addonv1alpha1.ManagedClusterAddOn{}, nameIndex, func(o client.Object) []string {
		return []string{o.GetName()}
	}); err != nil {
		return fmt.Errorf("index ManagedClusterAddOns by name: %w", err)
	}
	if err := indexer.IndexField(ctx, &addonv1alpha1.ManagedClusterAddOn{}, hostingIndex, func(o client.Object) []string {
		if h := template.HostingCluster(o.(*addonv1alpha1.ManagedClusterAddOn)); h != "" {
			return []string{h}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index ManagedClusterAddOns by hosting cluster: %w", err)
	}
	hasAddonLabel := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[addonv1alpha1.AddonLabelKey]
		return ok
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(byAddonLabel), builder.WithPredicates(hasAddonLabel)).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(byBindingLabels), builder.WithPredicates(hasAddonLabel)).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(r.byName)).
		Watches(configObject(templateGVK), handler.EnqueueRequestsFromMapFunc(r.byConfig(addonv1alpha1.AddOnTemplateResource))).
		Watches(configObject(deployCfgGVK), handler.EnqueueRequestsFromMapFunc(r.byConfig(addonv1alpha1.AddOnDeploymentConfigResource))).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace),
			builder.WithPredicates(predicate.Or(clusterDeletion(), registriesChanged(), hostingReportChanged()))).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.discovering)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.hostedOn),
			builder.WithPredicates(predicate.Or(clusterDeletion(), clusterCreation()))).
		Complete(r)
}

// configObject returns an unstructured object of kind gvk, to watch.
func configObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// desiredKeys returns the keys of the desired configurations of mca.
func desiredKeys(mca *addonv1alpha1.ManagedClusterAddOn) []string {
	var keys []string
	for k := range config.Desired(mca) {
		keys = append(keys, k)
	}
	return keys
}

// byAddonLabel maps an add-on's work to its ManagedClusterAddOn: in the
// work's namespace, or for a hosting work in the namespace its label
// open-cluster-management.io/addon-namespace names.
func byAddonLabel(_ context.Context, o client.Object) []reconcile.Request {
	cluster, addon := template.WorkAddon(o.GetNamespace(), o.GetLabels())
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cluster, Name: addon}}}
}

// hostedOn maps a ManagedCluster to the add-ons it hosts.
func (r *Reconciler) hostedOn(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, client.MatchingFields{hostingIndex: o.GetName()})
}

// byBindingLabels maps a hub permission RoleBinding, in any namespace, to
// its ManagedClusterAddOn.
func byBindingLabels(_ context.Context, o client.Object) []reconcile.Request {
	cluster := o.GetLabels()[clusterv1.ClusterNameLabelKey]
	if cluster == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cluster, Name: o.GetLabels()[addonv1alpha1.AddonLabelKey]}}}
}

// byName maps a ClusterManagementAddOn to the add-on on every cluster.
func (r *Reconciler) byName(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, client.MatchingFields{nameIndex: o.GetName()})
}

// byConfig maps a configuration of resource to the add-ons desiring it.
func (r *Reconciler) byConfig(resource string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		key := config.Key{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: resource},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: o.GetNamespace(), Name: o.GetName()},
		}
		return r.requests(ctx, client.MatchingFields{configIndex: key.String()})
	}
}

// inNamespace maps a ManagedCluster to the add-ons in its namespace.
func (r *Reconciler) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, client.InNamespace(o.GetName()))
}

// requests lists the ManagedClusterAddOns matching opts as requests.
func (r *Reconciler) requests(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// registriesChanged passes the updates of a ManagedCluster that change its
// annotation open-cluster-management.io/image-registries, or its claim of
// the Pod Security level of the add-on agents' namespace
// (podsecurity.AddonNamespaceClaim).
func registriesChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			key := clusterv1.ClusterImageRegistriesAnnotationKey
			if e.ObjectOld.GetAnnotations()[key] != e.ObjectNew.GetAnnotations()[key] {
				return true
			}
			old, oldOK := e.ObjectOld.(*clusterv1.ManagedCluster)
			cur, curOK := e.ObjectNew.(*clusterv1.ManagedCluster)
			return oldOK && curOK && addonNamespaceEnforces(old) != addonNamespaceEnforces(cur)
		},
	}
}

// hostingReportChanged passes the updates of a ManagedCluster that change
// the hosting cluster its agent reports or its labels (its cluster sets),
// on which the discovery of the hosting cluster of its add-ons and their
// HostingClusterValidity depend.
func hostingReportChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, oldOK := e.ObjectOld.(*clusterv1.ManagedCluster)
			cur, curOK := e.ObjectNew.(*clusterv1.ManagedCluster)
			return oldOK && curOK && (reportedHost(old) != reportedHost(cur) || !maps.Equal(old.Labels, cur.Labels))
		},
	}
}

// discovering maps a ManagedClusterSet to the add-ons waiting for their
// hosting cluster to be discovered, whose wait a change of the set may end.
func (r *Reconciler) discovering(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List ManagedClusterAddOns")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if wantsDiscovery(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// clusterCreation passes the creation of a ManagedCluster.
func clusterCreation() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
	}
}

// clusterDeletion passes the events of a ManagedCluster's deletion: its
// deletion timestamp set, or the object gone.
func clusterDeletion() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		DeleteFunc: func(event.DeleteEvent) bool { return true },
	}
}
