package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// FieldManager is the server-side apply field manager of the operator.
const FieldManager = "klusterlet"

// Finalizer holds a Klusterlet until the operator has removed its agent.
const Finalizer = config.KlusterletCleanupFinalizer

// recheckPeriod is how often a Klusterlet waiting for something the operator
// does not watch (its bootstrap Secret, the removal of its objects) is
// reconciled again.
const recheckPeriod = 5 * time.Second

// Reconciler reconciles Klusterlets.
type Reconciler struct {
	// Client reads Klusterlets and the rendered Deployments from the cache
	// and writes the Klusterlets' finalizer and status.
	Client client.Client
	// Direct reads and writes everything else without a cache: the agent
	// objects, Secrets, CRDs.
	Direct client.Client
	// Namespace is the operator's own namespace, whose ConfigMap
	// ocm-tls-profile gives the agents' TLS profile where a Klusterlet's
	// spec.tlsProfile does not (config.ResolveTLSProfile), and whose Secret
	// open-cluster-management-image-pull-credentials the operator copies
	// next to the agent, whose Deployment references it (pullsecret.Wire).
	// The cache holds both.
	Namespace string
	// EnforceSharedPodSecurity makes the add-on agents' namespace, which
	// OCM's add-ons share, enforce restricted Pod Security too
	// (--enforce-pod-security-in-shared-namespaces); it warns and audits at
	// restricted either way.
	EnforceSharedPodSecurity bool
}

// CacheSelector is the label selector of the Deployments the operator's
// cache holds: those it rendered.
func CacheSelector() string { return config.KlusterletOwnerLabel }

// SetupWithManager registers the controller: it reconciles a Klusterlet when
// it changes, when a Deployment rendered for it changes, and every
// Klusterlet when the ConfigMap ocm-tls-profile or the image pull Secret in
// Namespace changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toOwner := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if name := obj.GetLabels()[config.KlusterletOwnerLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		return nil
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("klusterlet-operator").
		For(&operatorv1.Klusterlet{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, deletionPredicate()))).
		Watches(&appsv1.Deployment{}, toOwner).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.allKlusterlets),
			builder.WithPredicates(isTLSProfileSource(r.Namespace))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.allKlusterlets),
			builder.WithPredicates(isSource(r.Namespace, pullsecret.Name))).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the Klusterlet operator: %w", err)
	}
	return nil
}

// deletionPredicate passes updates that set the deletion timestamp or
// change the finalizers, which do not change the generation.
func deletionPredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectNew.GetDeletionTimestamp() != nil || len(e.ObjectNew.GetFinalizers()) != len(e.ObjectOld.GetFinalizers())
	}}
}

// Reconcile renders, applies and prunes the agent of one Klusterlet and
// reports its status, or removes the agent of a deleted Klusterlet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	k := &operatorv1.Klusterlet{}
	if err := r.Client.Get(ctx, req.NamespacedName, k); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !k.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, k)
	}
	// Persist the finalizer before anything is installed, so that a
	// deletion always finds it; its update event brings the Klusterlet
	// back.
	if changed, err := patch.EnsureFinalizer(ctx, r.Client, k, Finalizer); err != nil || changed {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	h := patch.NewHelper(k, r.Client)
	k = k.DeepCopy()
	result, err := r.reconcileNormal(ctx, k)
	if perr := h.Patch(ctx, k); perr != nil {
		if apierrors.IsConflict(perr) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, errors.Join(err, perr)
	}
	if err != nil {
		log.Error(err, "Cannot install the agent", "klusterlet", klog.KObj(k))
	}
	return result, nil
}

// reconcileNormal installs the agent of k and sets k's status. Errors are
// reported on the status; the returned error only asks for a retry.
func (r *Reconciler) reconcileNormal(ctx context.Context, k *operatorv1.Klusterlet) (ctrl.Result, error) {
	k.Status.ObservedGeneration = k.Generation
	if k.Mode().IsHosted() && k.Name == operatorv1.KlusterletName {
		setApplied(k, &config.FieldError{Reason: "HostedKlusterletName", Message: "metadata.name" + ": " + "a Klusterlet in mode " + string(k.Mode()) + " must be named klusterlet-<cluster>, its namespace on this hosting cluster; create it under that name"}, nil, 0)
		return ctrl.Result{}, nil
	}
	namespace := agentNamespace(k)
	previous, err := r.previousNamespace(ctx, k, namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	bootstrap, ready := r.readyToApply(ctx, k, namespace, previous)
	values, unknown, err := config.AgentValuesFromKlusterlet(k, bootstrap)
	if err == nil {
		values.TLS, err = r.tlsProfile(ctx, k)
	}
	if err != nil {
		setApplied(k, err, nil, 0)
		return ctrl.Result{}, nil
	}
	if values.NetworkPolicy, err = r.networkPolicy(ctx, k, namespace); err != nil {
		setApplied(k, err, nil, 0)
		return ctrl.Result{}, err
	}
	pull, err := r.pullSecret(ctx)
	if err != nil {
		setApplied(k, err, nil, 0)
		return ctrl.Result{}, err
	}
	objs, err := render(k, values, pull, r.EnforceSharedPodSecurity)
	if err != nil {
		setApplied(k, err, nil, 0)
		return ctrl.Result{}, err
	}
	if previous != "" {
		if err := r.copySecrets(ctx, previous, namespace, k.BootstrapKubeconfigSecrets()); err != nil {
			setApplied(k, err, nil, 0)
			return ctrl.Result{}, err
		}
	}
	if err := apply.Apply(ctx, r.Direct, objs, apply.Options{FieldManager: FieldManager}); err != nil {
		setApplied(k, err, unknown, 0)
		return ctrl.Result{}, err
	}
	if err := r.prune(ctx, k.Name, objs); err != nil {
		setApplied(k, err, unknown, 0)
		return ctrl.Result{}, err
	}
	var managedErr error
	if k.Mode().IsHosted() {
		// The agent itself reports an unreachable managed cluster; the
		// add-on namespace there is tried again without holding the agent.
		if managedErr = r.applyManagedAddonNamespace(ctx, k); managedErr != nil {
			ctrl.LoggerFrom(ctx).Info("Cannot create the add-on namespace on the managed cluster yet; retrying", "klusterlet", k.Name, "error", managedErr.Error())
		}
	}
	setApplied(k, nil, unknown, len(objs))
	k.Status.RelatedResources = r.relatedResources(objs)
	if err := r.setDeploymentStatus(ctx, k, namespace, agentDeployment(k)); err != nil {
		return ctrl.Result{}, err
	}
	if !ready || managedErr != nil {
		return ctrl.Result{RequeueAfter: recheckPeriod}, nil
	}
	return ctrl.Result{}, nil
}

// render returns the agent objects of k that the operator applies: every
// rendered object except those the user owns, with a copy of the image
// pull Secret pull (nil: none) next to the agent, which references it, each
// labeled with k's name; enforceShared is Reconciler.EnforceSharedPodSecurity.
func render(k *operatorv1.Klusterlet, v config.AgentValues, pull *corev1.Secret, enforceShared bool) ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	var err error
	if k.Mode().IsHosted() {
		// The managed cluster's CRDs are written by whoever wrote the
		// managed cluster's kubeconfig (`kubectl ocm join --mode hosted`).
		all, _, err = config.HostedAgentObjects(v)
	} else {
		all, err = config.AgentObjects(v)
	}
	if err != nil {
		return nil, fmt.Errorf("render the agent: %w", err)
	}
	if !k.Mode().IsHosted() {
		all = append(all, addonNamespace(enforceShared))
	}
	if all, err = pullsecret.Wire(all, pull); err != nil {
		return nil, fmt.Errorf("render the agent: %w", err)
	}
	out := make([]*unstructured.Unstructured, 0, len(all))
	for _, obj := range all {
		if config.IsUserOwned(obj) {
			continue
		}
		labels := obj.GetLabels()
		labels[config.KlusterletOwnerLabel] = k.Name
		obj.SetLabels(labels)
		out = append(out, obj)
	}
	return out, nil
}

// addonNamespace is the namespace add-on agents are installed in unless
// they are told otherwise (open-cluster-management-agent-addon). OCM's
// Klusterlet operator creates it on the managed cluster (in Hosted mode
// through the managed cluster's kubeconfig, applyManagedAddonNamespace),
// and add-on
// managers built with addon-framework deploy their agents there without a
// Namespace manifest of their own; it goes with the agent when the
// Klusterlet is deleted, as in OCM. Its label
// addon.open-cluster-management.io/namespace=true brings it the copies of the
// TLS profile and the image pull Secret (AddonCopyReconciler). OCM's
// add-on agents run here, and most do not meet restricted Pod Security: it
// warns and audits at restricted, and enforces it only when enforce is set
// (podsecurity.SharedLabels); the registration agent reports which level it
// enforces to the hub, which then says on the ManagedClusterAddOn of a
// template add-on when its Pods will be refused.
func addonNamespace(enforce bool) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(addonv1alpha1.DefaultAddonInstallNamespace)
	labels := podsecurity.SharedLabels(enforce)
	labels[apply.PartOfLabelKey] = apply.PartOfLabelValue
	labels[addonv1alpha1.InstallNamespaceLabelKey] = "true"
	ns.SetLabels(labels)
	ns.SetAnnotations(map[string]string{podsecurity.SetByAnnotation: podsecurity.SetByKlusterlet})
	return ns
}

// agentNamespace is where the agent of k runs on this cluster: spec.namespace
// in Default and Singleton mode, the Klusterlet's name in the Hosted modes.
func agentNamespace(k *operatorv1.Klusterlet) string {
	if k.Mode().IsHosted() {
		return k.Name
	}
	return k.AgentNamespace()
}

// agentDeployment names the agent Deployment of k.
func agentDeployment(k *operatorv1.Klusterlet) string {
	if k.Mode().IsHosted() {
		return k.Name + "-agent"
	}
	return config.AgentDeployment
}

// allKlusterlets maps an event to every Klusterlet in the cache.
func (r *Reconciler) allKlusterlets(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &operatorv1.KlusterletList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list the Klusterlets to apply the changed TLS profile to")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, k := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: k.Name}})
	}
	return out
}

// tlsProfile returns the TLS profile the operator passes to the agent of
// k: k's spec.tlsProfile over the ConfigMap ocm-tls-profile in the
// operator's namespace. A bad value is a *config.FieldError.
func (r *Reconciler) tlsProfile(ctx context.Context, k *operatorv1.Klusterlet) (tlsprofile.Settings, error) {
	var source *corev1.ConfigMap
	if r.Namespace != "" {
		cm := &corev1.ConfigMap{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: tlsprofile.ConfigMapName}, cm)
		switch {
		case err == nil:
			source = cm
		case !apierrors.IsNotFound(err):
			return tlsprofile.Settings{}, fmt.Errorf("read the TLS profile, ConfigMap %s/%s: %w", r.Namespace, tlsprofile.ConfigMapName, err)
		}
	}
	return config.ResolveTLSProfile("Klusterlet", k.Name, k.Spec.TLSProfile, source)
}

// isTLSProfileSource passes events of the ConfigMap ocm-tls-profile in the
// operator's namespace.
func isTLSProfileSource(namespace string) predicate.Predicate {
	return isSource(namespace, tlsprofile.ConfigMapName)
}

// isSource passes events of the object name in the operator's namespace.
func isSource(namespace, name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return namespace != "" && obj.GetNamespace() == namespace && obj.GetName() == name
	})
}

// pullSecret reads the image pull Secret in the operator's namespace from
// the cache; nil when there is none.
func (r *Reconciler) pullSecret(ctx context.Context) (*corev1.Secret, error) {
	return pullsecret.Get(ctx, r.Client, r.Namespace)
}
