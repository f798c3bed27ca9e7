package klusterlet

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// TLSProfileCopyLabel marks the copies of the TLS profile the operator
// writes into add-on namespaces; it deletes only ConfigMaps that carry it.
// Its value is the namespace copied from.
const TLSProfileCopyLabel = "operator.open-cluster-management.io/tls-profile-copied-from"

// addonCopy is one object of the operator's namespace that the operator
// copies into every add-on namespace.
type addonCopy struct {
	// what names it in messages.
	what string
	// name is its name, in the operator's namespace and in each copy.
	name string
	// label marks a copy; its value is the namespace copied from.
	label string
	// object returns an empty object of its kind.
	object func() client.Object
	// sync sets the payload (data, type) of the copy dst to that of src and
	// reports whether it changed.
	sync func(dst, src client.Object) bool
}

// addonCopies are the objects copied into add-on namespaces, as OCM's
// Klusterlet operator copies them: the TLS profile add-on agents read, and
// the image pull Secret their Deployments reference.
var addonCopies = []addonCopy{{
	what:   "the TLS profile",
	name:   tlsprofile.ConfigMapName,
	label:  TLSProfileCopyLabel,
	object: func() client.Object { return &corev1.ConfigMap{} },
	sync: func(dst, src client.Object) bool {
		d, s := dst.(*corev1.ConfigMap), src.(*corev1.ConfigMap)
		if maps.Equal(d.Data, s.Data) && len(d.BinaryData) == 0 {
			return false
		}
		d.Data, d.BinaryData = maps.Clone(s.Data), nil
		return true
	},
}, {
	what:   "the image pull Secret",
	name:   pullsecret.Name,
	label:  pullsecret.CopyLabel,
	object: func() client.Object { return &corev1.Secret{} },
	sync: func(dst, src client.Object) bool {
		d, s := dst.(*corev1.Secret), src.(*corev1.Secret)
		if d.Type == s.Type && maps.EqualFunc(d.Data, s.Data, bytes.Equal) && len(d.StringData) == 0 {
			return false
		}
		d.Type, d.Data, d.StringData = s.Type, maps.Clone(s.Data), nil
		return true
	},
}}

// AddonCopyReconciler keeps a copy of the ConfigMap ocm-tls-profile and of
// the Secret open-cluster-management-image-pull-credentials of the
// operator's namespace in every namespace of this cluster labeled
// addon.open-cluster-management.io/namespace=true, where add-on agents read
// the one and pull their images with the other, as OCM's Klusterlet
// operator does: it creates each copy, keeps it equal to its source and
// deletes it once the source is gone. It writes only in labeled
// namespaces, and deletes only objects carrying the copy label: a namespace
// that loses the label keeps its copies, and a label set by hand elsewhere
// makes the operator delete nothing. A request names a namespace.
type AddonCopyReconciler struct {
	// Client reads namespaces, ConfigMaps and Secrets from the cache
	// (AddonCache) and writes the copies.
	Client client.Client
	// Namespace is the operator's namespace, which holds the sources.
	Namespace string
}

// AddonCache adds to the manager's cache what the reconciler reads: the
// namespaces labeled as add-on namespaces, the ConfigMaps named
// ocm-tls-profile and the Secrets named
// open-cluster-management-image-pull-credentials (the sources and the
// copies), nothing else.
func AddonCache(byObject map[client.Object]cache.ByObject) {
	byObject[&corev1.Namespace{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{addonv1alpha1.InstallNamespaceLabelKey: "true"})}
	byObject[&corev1.ConfigMap{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", tlsprofile.ConfigMapName)}
	byObject[&corev1.Secret{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", pullsecret.Name)}
}

// SetupWithManager registers the reconciler: a labeled namespace, a change
// of a copy, and a change of a source (for every labeled namespace) bring
// it.
func (r *AddonCopyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("addon-copies").For(&corev1.Namespace{})
	for _, c := range addonCopies {
		b = b.Watches(c.object(), handler.EnqueueRequestsFromMapFunc(r.namespacesOf),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == c.name })))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("set up the add-on namespace copier: %w", err)
	}
	return nil
}

// namespacesOf maps an event of a source or copy to the namespaces to
// reconcile: every labeled namespace for a source, the copy's own
// otherwise.
func (r *AddonCopyReconciler) namespacesOf(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetNamespace() != r.Namespace {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
	}
	list := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list the add-on namespaces to copy to", "source", klog.KObj(obj))
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns.Name}})
	}
	return out
}

// Reconcile brings the copies in the namespace req.Name in step with their
// sources.
func (r *AddonCopyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name == r.Namespace {
		return ctrl.Result{}, nil // the sources themselves
	}
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: req.Name}, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	// The cache holds labeled namespaces only: NotFound is also a namespace
	// without the label, where the operator writes and deletes nothing.
	if err != nil || ns.Labels[addonv1alpha1.InstallNamespaceLabelKey] != "true" || !ns.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	for _, c := range addonCopies {
		if err := r.reconcileCopy(ctx, c, req.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// reconcileCopy creates, updates or deletes the copy c in the add-on
// namespace namespace.
func (r *AddonCopyReconciler) reconcileCopy(ctx context.Context, c addonCopy, namespace string) error {
	key := types.NamespacedName{Namespace: namespace, Name: c.name}
	source := c.object()
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: c.name}, source)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	wanted := err == nil
	current := c.object()
	err = r.Client.Get(ctx, key, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	log := ctrl.LoggerFrom(ctx).WithValues("object", klog.KRef(key.Namespace, key.Name))
	switch {
	case !wanted && exists && current.GetLabels()[c.label] != "":
		if err := r.Client.Delete(ctx, current); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the copy of %s %s: %w", c.what, key, err)
		}
		log.V(2).Info("Deleted a copy", "of", c.what)
	case !wanted:
	case !exists:
		copied := c.object()
		copied.SetNamespace(key.Namespace)
		copied.SetName(key.Name)
		copied.SetLabels(copyLabels(nil, c.label, r.Namespace))
		c.sync(copied, source)
		if err := r.Client.Create(ctx, copied); err != nil {
			return fmt.Errorf("copy %s to %s: %w", c.what, key, err)
		}
		log.V(2).Info("Copied", "what", c.what, "from", r.Namespace)
	default:
		copied := current.DeepCopyObject().(client.Object)
		changed := c.sync(copied, source)
		if !changed && current.GetLabels()[c.label] == r.Namespace {
			return nil
		}
		copied.SetLabels(copyLabels(copied.GetLabels(), c.label, r.Namespace))
		if err := r.Client.Update(ctx, copied); err != nil {
			return fmt.Errorf("update the copy of %s %s: %w", c.what, key, err)
		}
		log.V(2).Info("Updated a copy", "of", c.what, "from", r.Namespace)
	}
	return nil
}

// copyLabels returns labels with the part-of label and the copy label
// label, from namespace from, added.
func copyLabels(labels map[string]string, label, from string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[apply.PartOfLabelKey] = apply.PartOfLabelValue
	out[label] = from
	return out
}
