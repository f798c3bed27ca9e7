package clustermanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubclean"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// FieldManager is the server-side apply field manager of the operator.
const FieldManager = "cluster-manager"

// Resync is how often the operator re-applies the hub when nothing it
// watches changed, so that an object edited or deleted by hand returns.
const Resync = 5 * time.Minute

// Reconciler is the ClusterManager operator.
type Reconciler struct {
	// Client reads the ClusterManager and the hub controller Deployment from
	// the manager's cache (CacheOptions) and writes their status.
	Client client.Client
	// Writer applies, reads and deletes the hub's objects without a cache.
	Writer client.Client
	// Name is the ClusterManager the operator acts on (--cluster-manager-name).
	Name string
	// ConversionWebhookURL is passed into config.HubValues
	// (--conversion-webhook-url).
	ConversionWebhookURL string
	// Namespace is the operator's own namespace, whose ConfigMap
	// ocm-tls-profile gives the hub controller's TLS profile where the
	// ClusterManager's spec.tlsProfile does not (config.ResolveTLSProfile),
	// and whose Secret open-cluster-management-image-pull-credentials the
	// operator copies next to the Deployments it renders, which reference it
	// (pullsecret.Wire).
	Namespace string

	// mu guards applied.
	mu sync.Mutex
	// applied is the generation of the ClusterManager last applied in full,
	// the ConfigMap ocm-tls-profile and the image pull Secret it was
	// applied with (their resource versions, empty when there was none),
	// and when: a status change of the hub controller Deployment within
	// Resync then only updates the ClusterManager's status.
	applied struct {
		generation  int64
		tlsVersion  string
		pullVersion string
		at          time.Time
	}
}

// CacheOptions restricts the manager's cache to what the operator watches:
// the Deployments of the product in the hub namespace, the ConfigMap
// ocm-tls-profile and the image pull Secret in the operator's namespace.
func CacheOptions(namespace string) cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1.Deployment{}: {
			Namespaces: map[string]cache.Config{config.HubNamespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{apply.PartOfLabelKey: apply.PartOfLabelValue}),
		},
		&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", tlsprofile.ConfigMapName),
		},
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", pullsecret.Name),
		},
	}}
}

// SetupWithManager registers the operator for the ClusterManager Name, the
// Deployments it rendered, and the ConfigMap ocm-tls-profile and the image
// pull Secret in Namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	named := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == r.Name })
	toClusterManager := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: r.Name}}}
	})
	tlsProfile := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetNamespace() == r.Namespace && obj.GetName() == tlsprofile.ConfigMapName
	})
	pullSecret := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetNamespace() == r.Namespace && obj.GetName() == pullsecret.Name
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("clustermanager-operator").
		For(&operatorv1.ClusterManager{}, builder.WithPredicates(named)).
		Watches(&appsv1.Deployment{}, toClusterManager).
		Watches(&corev1.ConfigMap{}, toClusterManager, builder.WithPredicates(tlsProfile)).
		Watches(&corev1.Secret{}, toClusterManager, builder.WithPredicates(pullSecret)).
		Complete(r)
}

// Reconcile applies the hub as the ClusterManager says and reports its
// state, or removes the hub once the ClusterManager is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &operatorv1.ClusterManager{}
	if err := r.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return r.cleanup(ctx, cm)
	}
	if _, err := patch.EnsureFinalizer(ctx, r.Client, cm, operatorv1.CleanupFinalizer); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	h := patch.NewHelper(cm, r.Client)
	profile, err := r.tlsProfile(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	pull, err := r.pullSecret(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}
	var applyErr error
	applied := r.stale(cm, profile, pull) || r.Writer.Get(ctx, key, dep) != nil
	if applied {
		applyErr = r.apply(ctx, cm, profile, pull)
	}
	// Read after applying, from the API server, so that the state judged
	// is that of the pod template just applied.
	depErr := r.Writer.Get(ctx, key, dep)
	if depErr != nil {
		dep = nil
	}
	setDeploymentConditions(cm, dep, depErr)
	tunnel := &appsv1.Deployment{}
	if err := r.Writer.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: config.HubTunnelDeployment}, tunnel); err != nil {
		setTunnelConditions(cm, nil, err)
	} else {
		setTunnelConditions(cm, tunnel, nil)
	}
	cm.Status.ObservedGeneration = cm.Generation
	if err := h.Patch(ctx, cm); err != nil {
		return ctrl.Result{}, errors.Join(applyErr, err)
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	if applied {
		r.mu.Lock()
		r.applied.generation, r.applied.tlsVersion, r.applied.pullVersion, r.applied.at = cm.Generation, resourceVersion(profile), resourceVersion(pull), time.Now()
		r.mu.Unlock()
	}
	return ctrl.Result{RequeueAfter: Resync}, nil
}

// stale reports whether the hub must be applied for cm, the ConfigMap
// profile and the image pull Secret pull (nil: none): this process did not
// apply its generation with these versions of profile and pull and record
// the outcome within Resync, or the ClusterManager does not say it was
// applied at that generation.
func (r *Reconciler) stale(cm *operatorv1.ClusterManager, profile *corev1.ConfigMap, pull *corev1.Secret) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied)
	return r.applied.generation != cm.Generation || r.applied.tlsVersion != resourceVersion(profile) ||
		r.applied.pullVersion != resourceVersion(pull) || time.Since(r.applied.at) >= Resync ||
		c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != cm.Generation
}

// tlsProfile reads the ConfigMap ocm-tls-profile in the operator's
// namespace from the cache; nil when there is none.
func (r *Reconciler) tlsProfile(ctx context.Context) (*corev1.ConfigMap, error) {
	if r.Namespace == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: tlsprofile.ConfigMapName}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: %w", r.Namespace, tlsprofile.ConfigMapName, err)
	}
	return cm, nil
}

// pullSecret reads the image pull Secret in the operator's namespace from
// the cache; nil when there is none.
func (r *Reconciler) pullSecret(ctx context.Context) (*corev1.Secret, error) {
	return pullsecret.Get(ctx, r.Client, r.Namespace)
}

// resourceVersion is obj's resource version, empty for nil.
func resourceVersion[T interface {
	*corev1.ConfigMap | *corev1.Secret
	GetResourceVersion() string
}](obj T) string {
	if obj == nil {
		return ""
	}
	return obj.GetResourceVersion()
}

// apply renders and applies the hub for cm, with the TLS profile of its
// spec.tlsProfile over that of the ConfigMap profile (nil: none) and, when
// pull is not nil, a copy of that image pull Secret next to every
// Deployment, which references it (pullsecret.Wire); it deletes
// what it applied before and no longer renders, and sets Applied,
// relatedResources and generations. A spec or a profile that cannot take
// effect changes nothing: Applied is False, naming the field or key. The
// error is one worth retrying.
func (r *Reconciler) apply(ctx context.Context, cm *operatorv1.ClusterManager, profile *corev1.ConfigMap, pull *corev1.Secret) error {
	values, unknown, err := config.HubValuesFromClusterManager(cm)
	if err == nil {
		values.TLS, err = config.ResolveTLSProfile("ClusterManager", cm.Name, cm.Spec.TLSProfile, profile)
	}
	if err != nil {
		reason := "InvalidSpec"
		if fe := (*config.FieldError)(nil); errors.As(err, &fe) {
			reason = fe.Reason
		}
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, reason, "Nothing was changed: "+err.Error())
		return nil
	}
	values.ConversionWebhookURL = r.ConversionWebhookURL
	objs, err := config.HubObjects(values)
	if err == nil {
		objs, err = pullsecret.Wire(objs, pull)
	}
	if err != nil {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRuntimeResourceApplyFailed, fmt.Sprintf("render the hub: %v", err))
		return nil
	}
	if err := apply.Apply(ctx, r.Writer, objs, apply.Options{FieldManager: FieldManager}); err != nil {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRuntimeResourceApplyFailed, err.Error())
		return err
	}
	related, err := r.related(objs)
	if err != nil {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRuntimeResourceApplyFailed, err.Error())
		return err
	}
	if err := r.prune(ctx, cm.Status.RelatedResources, related); err != nil {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRuntimeResourceApplyFailed, err.Error())
		return err
	}
	// An earlier release bound the bootstrap role once per cluster-bound
	// bootstrap identity; this one binds it once to their namespace.
	if err := hubclean.RemoveEarlierClusterBootstrap(ctx, r.Writer, func(obj client.Object) {
		ctrl.LoggerFrom(ctx).Info("Removed an earlier release's cluster-bound bootstrap identity", "kind", obj.GetObjectKind().GroupVersionKind().Kind, "object", klog.KObj(obj))
	}); err != nil {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRuntimeResourceApplyFailed, err.Error())
		return err
	}
	cm.Status.RelatedResources = related
	msg := fmt.Sprintf("%d hub objects applied.", len(objs))
	if len(unknown) > 0 {
		msg += fmt.Sprintf(" Unknown feature gates are ignored: %v.", unknown)
	}
	setCondition(cm, operatorv1.ConditionClusterManagerApplied, true, operatorv1.ReasonClusterManagerApplied, msg)
	return nil
}

// related returns the relatedResources entries of objs.
func (r *Reconciler) related(objs []*unstructured.Unstructured) ([]operatorv1.RelatedResourceMeta, error) {
	out := make([]operatorv1.RelatedResourceMeta, 0, len(objs))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := r.Writer.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("find the resource of %s: %w", apply.Describe(obj), err)
		}
		out = append(out, operatorv1.RelatedResourceMeta{
			Group: gvk.Group, Version: gvk.Version, Resource: m.Resource.Resource,
			Namespace: obj.GetNamespace(), Name: obj.GetName(),
		})
	}
	return out, nil
}

// prune deletes, in reverse install order, the objects of before that now
// is without: what the operator applied earlier and no longer renders.
func (r *Reconciler) prune(ctx context.Context, before, now []operatorv1.RelatedResourceMeta) error {
	keep := sets.New(now...)
	var gone []*unstructured.Unstructured
	for _, rr := range before {
		if keep.Has(rr) {
			continue
		}
		gvk, err := r.Writer.RESTMapper().KindFor(schema.GroupVersionResource{Group: rr.Group, Version: rr.Version, Resource: rr.Resource})
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // its kind is gone, and it with it
			}
			return fmt.Errorf("find the kind of %s %s: %w", rr.Resource, rr.Name, err)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(rr.Namespace)
		u.SetName(rr.Name)
		gone = append(gone, u)
	}
	return apply.Delete(ctx, r.Writer, gone)
}

// setCondition sets the condition typ of cm at cm's generation.
func setCondition(cm *operatorv1.ClusterManager, typ string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&cm.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: cm.Generation,
	})
}
