package klusterlet

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// TLSProfileCopyLabel marks the copies of the TLS profile the operator
// writes into add-on namespaces; it deletes only ConfigMaps that carry it.
// Its value is the namespace copied from.
const TLSProfileCopyLabel = "operator.open-cluster-management.io/tls-profile-copied-from"

// AddonTLSProfileReconciler keeps a copy of the ConfigMap ocm-tls-profile
// of the operator's namespace in every namespace of this cluster labeled
// addon.open-cluster-management.io/namespace=true, where add-on agents read
// it, as OCM's Klusterlet operator does: it creates the copy, keeps its
// data equal to the source's and deletes it once the source is gone or the
// namespace loses the label. A request names a namespace.
type AddonTLSProfileReconciler struct {
	// Client reads namespaces and ConfigMaps from the cache (AddonCache) and
	// writes the copies.
	Client client.Client
	// Namespace is the operator's namespace, which holds the source.
	Namespace string
}

// AddonCache adds to the manager's cache what the reconciler reads: the
// namespaces labeled as add-on namespaces, and the ConfigMaps named
// ocm-tls-profile (the source and the copies), nothing else.
func AddonCache(byObject map[client.Object]cache.ByObject) {
	byObject[&corev1.Namespace{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{addonv1alpha1.InstallNamespaceLabelKey: "true"})}
	byObject[&corev1.ConfigMap{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", tlsprofile.ConfigMapName)}
}

// SetupWithManager registers the reconciler: a labeled namespace, a change
// of its copy, and a change of the source (for every labeled namespace)
// bring it.
func (r *AddonTLSProfileReconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("addon-tls-profile").
		For(&corev1.Namespace{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOf),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == tlsprofile.ConfigMapName }))).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the add-on TLS profile copier: %w", err)
	}
	return nil
}

// namespacesOf maps a ConfigMap event to the namespaces to reconcile:
// every labeled namespace for the source, the copy's own otherwise.
func (r *AddonTLSProfileReconciler) namespacesOf(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetNamespace() != r.Namespace {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
	}
	list := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list the add-on namespaces to copy the TLS profile to")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns.Name}})
	}
	return out
}

// Reconcile brings the copy in the namespace req.Name in step with the
// source.
func (r *AddonTLSProfileReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name == r.Namespace {
		return ctrl.Result{}, nil // the source itself
	}
	key := types.NamespacedName{Namespace: req.Name, Name: tlsprofile.ConfigMapName}
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: req.Name}, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	// The cache holds labeled namespaces only: NotFound is also a namespace
	// that lost its label.
	wanted := err == nil && ns.Labels[addonv1alpha1.InstallNamespaceLabelKey] == "true" && ns.DeletionTimestamp.IsZero()
	source := &corev1.ConfigMap{}
	if wanted {
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: tlsprofile.ConfigMapName}, source)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		wanted = err == nil
	}
	current := &corev1.ConfigMap{}
	err = r.Client.Get(ctx, key, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	log := ctrl.LoggerFrom(ctx).WithValues("configMap", klog.KRef(key.Namespace, key.Name))
	switch {
	case !wanted && exists && current.Labels[TLSProfileCopyLabel] != "":
		if err := r.Client.Delete(ctx, current); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("delete the copy of the TLS profile %s: %w", key, err)
		}
		log.V(2).Info("Deleted the copy of the TLS profile")
	case !wanted:
	case !exists:
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: r.copyLabels(nil)}, Data: source.Data}
		if err := r.Client.Create(ctx, cm); err != nil {
			return ctrl.Result{}, fmt.Errorf("copy the TLS profile to %s: %w", key, err)
		}
		log.V(2).Info("Copied the TLS profile", "from", r.Namespace)
	case !maps.Equal(current.Data, source.Data) || current.Labels[TLSProfileCopyLabel] != r.Namespace || len(current.BinaryData) > 0:
		cm := current.DeepCopy()
		cm.Data, cm.BinaryData, cm.Labels = source.Data, nil, r.copyLabels(cm.Labels)
		if err := r.Client.Update(ctx, cm); err != nil {
			return ctrl.Result{}, fmt.Errorf("update the copy of the TLS profile %s: %w", key, err)
		}
		log.V(2).Info("Updated the copy of the TLS profile", "from", r.Namespace)
	}
	return ctrl.Result{}, nil
}

// copyLabels returns labels with those of a copy added.
func (r *AddonTLSProfileReconciler) copyLabels(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[apply.PartOfLabelKey] = apply.PartOfLabelValue
	out[TLSProfileCopyLabel] = r.Namespace
	return out
}
