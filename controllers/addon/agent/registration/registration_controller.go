package registration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// controllerName names the controller in logs and metrics.
const controllerName = "addon-registration"

// Timing of the reconciler.
const (
	// ResyncInterval is how often a registration with a valid credential is
	// checked again; a deleted or written Secret is noticed at once.
	ResyncInterval = 10 * time.Minute
	// firstPollInterval is the first wait for a filed request; the wait
	// doubles up to maxPollInterval while it stays pending.
	firstPollInterval = 250 * time.Millisecond
	maxPollInterval   = 5 * time.Second
	// deniedRetryInterval is the wait after a denied request before a new one.
	deniedRetryInterval = 30 * time.Second
)

// SecretSuffix and PendingSecretSuffix name the add-on's Secrets: the hub
// credential <addon>-hub-kubeconfig in the install namespace, and the
// pending request <addon>-hub-kubeconfig-pending in the agent's namespace.
const (
	SecretSuffix        = "-hub-kubeconfig"
	PendingSecretSuffix = SecretSuffix + "-pending"
)

// Reconciler obtains the hub credentials of one cluster's add-ons.
type Reconciler struct {
	// Hub reads the cluster's ManagedClusterAddOns from the hub session's
	// cache and patches their status.
	Hub client.Client
	// HubDirect files and reads certificate signing requests on the hub,
	// around any cache: the agent may get its requests only by name.
	HubDirect client.Client
	// HubInfo is the agent's own hub kubeconfig, whose server, CA and proxy
	// the add-on kubeconfigs use.
	HubInfo *kubeconfig.Info
	// Cluster is the managed cluster's name, its namespace on the hub.
	Cluster string
	// Managed writes the add-on Secrets on the managed cluster and
	// ManagedReader reads them, around any cache.
	Managed       client.Client
	ManagedReader client.Reader
	// Agent writes the pending requests in Namespace, on the cluster the
	// agent runs on, and AgentReader reads them.
	Agent       client.Client
	AgentReader client.Reader
	Namespace   string
	// Hosted is true when the agent runs in Hosted mode, on the hosting
	// cluster: the credentials of hosted add-ons are written there.
	Hosted bool
	// Driver is how kube-apiserver credentials are obtained: csr (the
	// default when empty) or token. The reconciler reports it on each
	// ManagedClusterAddOn with such a registration.
	Driver string
	// TokenExpirationSeconds is the requested lifetime of the token
	// driver's tokens.
	TokenExpirationSeconds int64
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// polls holds the current wait of each pending request.
	polls map[string]time.Duration
}

// NewController returns the registration controller of r, watching the
// cluster's ManagedClusterAddOns in hub (the hub session's cache) and the
// agent's credential Secrets in secrets (NewSecretCache); the caller starts
// it and the caches. At start it also visits every add-on that has a Secret
// of this agent, so that Secrets of add-ons removed while the agent was not
// running are deleted.
func (r *Reconciler) NewController(hub, secrets cache.Cache, log logr.Logger) (controller.Controller, error) {
	c, err := hubsession.NewController(controllerName, r, 1, log, "addon")
	if err != nil {
		return nil, err
	}
	if err := c.Watch(source.Kind(hub, &addonv1alpha1.ManagedClusterAddOn{},
		&handler.TypedEnqueueRequestForObject[*addonv1alpha1.ManagedClusterAddOn]{}, registrationChanged())); err != nil {
		return nil, fmt.Errorf("watch ManagedClusterAddOns: %w", err)
	}
	if err := r.watchSecrets(c, secrets); err != nil {
		return nil, err
	}
	if err := c.Watch(source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		addons, err := r.addonsWithSecrets(ctx)
		if err != nil {
			log.Error(err, "Cannot list the add-on Secrets to clean up")
		}
		for _, a := range addons {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Cluster, Name: a}})
		}
		return nil
	})); err != nil {
		return nil, fmt.Errorf("watch add-on Secrets: %w", err)
	}
	return c, nil
}

// registrationChanged lets through the ManagedClusterAddOn events the
// reconciler acts on: creates, deletes, and updates of the registrations,
// the install namespace, the kube client driver, the hub's
// TokenInfrastructureReady condition or the deletion. The other status
// conditions the agent and the hub write do not wake it up.
func registrationChanged() predicate.TypedPredicate[*addonv1alpha1.ManagedClusterAddOn] {
	return predicate.TypedFuncs[*addonv1alpha1.ManagedClusterAddOn]{
		UpdateFunc: func(e event.TypedUpdateEvent[*addonv1alpha1.ManagedClusterAddOn]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return !equality.Semantic.DeepEqual(o.Status.Registrations, n.Status.Registrations) ||
				o.AgentInstallNamespace() != n.AgentInstallNamespace() ||
				o.Status.KubeClientDriver != n.Status.KubeClientDriver ||
				o.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] != n.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] ||
				!equality.Semantic.DeepEqual(tokenInfrastructure(o), tokenInfrastructure(n)) ||
				!n.DeletionTimestamp.Equal(o.DeletionTimestamp)
		},
	}
}

// On the hub the agent files and reads its requests with the cluster's
// agent identity (the per-cluster ClusterRole names its requests). On the
// managed cluster it writes the add-on Secrets in the add-ons' install
// namespaces and lists its own to clean them up; the pending requests live
// in its own namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;create;update;delete

// Reconcile brings the hub credential Secret of one add-on in line with its
// registrations.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	addon := req.Name
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Hub.Get(ctx, req.NamespacedName, mca); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.cleanup(ctx, addon, "")
	}
	if declared, err := r.declareDriver(ctx, mca); err != nil || declared {
		// The status change comes back as an event.
		return ctrl.Result{}, err
	}
	regs := r.certRegistrations(mca)
	var keep []types.NamespacedName
	for _, reg := range regs {
		keep = append(keep, reg.target, reg.pending)
	}
	token := r.driver() == addonv1alpha1.KubeClientDriverToken && registration.KubeClient(mca.Status.Registrations) >= 0
	if token {
		keep = append(keep, secretKey(mca))
	}
	// Credentials of registrations that are gone, or of another install
	// namespace, go.
	if err := r.cleanup(ctx, addon, r.hostingNamespace(mca), keep...); err != nil {
		return ctrl.Result{}, err
	}
	var result ctrl.Result
	var errs []error
	merge := func(res ctrl.Result, err error) {
		if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
			result.RequeueAfter = res.RequeueAfter
		}
		errs = append(errs, err)
	}
	if token {
		merge(r.reconcileToken(ctx, mca))
	}
	rotations := make([]*rotation, 0, len(regs))
	for _, reg := range regs {
		res, rot, err := r.reconcileCredential(ctx, mca, reg)
		merge(res, err)
		rotations = append(rotations, rot)
	}
	if len(regs) > 0 {
		errs = append(errs, r.reportRotation(ctx, mca, rotations))
	}
	if err := errors.Join(errs...); err != nil && !onlyConflicts(errs) {
		return result, err
	} else if err != nil {
		// Another writer changed the status since it was read: reconcile
		// again on fresh data soon. An error would be retried with a
		// growing backoff that drops the pending requests' poll.
		ctrl.LoggerFrom(ctx).V(2).Info("Status changed by another writer, reconciling again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return result, nil
}

// conflictRetry is how soon a reconcile whose status patch met another
// writer's change runs again.
const conflictRetry = 100 * time.Millisecond

// onlyConflicts reports whether every non-nil error of errs is a conflict
// with another writer.
func onlyConflicts(errs []error) bool {
	for _, err := range errs {
		if err != nil && !apierrors.IsConflict(err) {
			return false
		}
	}
	return true
}

// driver returns the driver of kube-apiserver credentials.
func (r *Reconciler) driver() string {
	if r.Driver == "" {
		return addonv1alpha1.KubeClientDriverCSR
	}
	return r.Driver
}

// declareDriver reports the agent's driver on mca, as OCM's agent does:
// status.kubeClientDriver is the driver when mca has a kube-apiserver-client
// registration and empty otherwise; with the token driver that
// registration's subject is the ServiceAccount's user
// (registration.TokenSubject), which the hub binds. It reports whether it
// changed the status.
func (r *Reconciler) declareDriver(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (bool, error) {
	h := patch.NewHelper(mca, r.Hub)
	i := registration.KubeClient(mca.Status.Registrations)
	mca.Status.KubeClientDriver = ""
	if i >= 0 {
		mca.Status.KubeClientDriver = r.driver()
		if r.driver() == addonv1alpha1.KubeClientDriverToken {
			mca.Status.Registrations[i].Subject = registration.TokenSubject(r.Cluster, mca.Name)
		}
	}
	if changed, err := h.HasChanges(mca); err != nil || !changed {
		return false, err
	}
	if err := h.Patch(ctx, mca); err != nil {
		return false, fmt.Errorf("report kubeClientDriver %q: %w", mca.Status.KubeClientDriver, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Reported the add-on's kube client driver", "driver", mca.Status.KubeClientDriver)
	return true, nil
}

// tokenInfrastructure returns the TokenInfrastructureReady condition of mca
// without its timestamps, nil when absent.
func tokenInfrastructure(mca *addonv1alpha1.ManagedClusterAddOn) *metav1.Condition {
	c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady)
	if c == nil {
		return nil
	}
	out := *c
	out.LastTransitionTime = metav1.Time{}
	return &out
}

// setRotated sets the ClusterCertificateRotated condition of mca.
func (r *Reconciler) setRotated(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, status metav1.ConditionStatus, reason, message string) error {
	return r.setCondition(ctx, mca, addonv1alpha1.ManagedClusterAddOnCertificateRotated, status, reason, message)
}

// setCondition sets condition typ of mca.
func (r *Reconciler) setCondition(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, typ string, status metav1.ConditionStatus, reason, message string) error {
	h := patch.NewHelper(mca, r.Hub)
	meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason,
		Message: message, ObservedGeneration: mca.Generation,
	})
	return h.Patch(ctx, mca)
}

// pollAfter returns the wait before csr is checked again: firstPollInterval
// at first, doubling up to maxPollInterval.
func (r *Reconciler) pollAfter(csr string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.polls == nil {
		r.polls = map[string]time.Duration{}
	}
	d := r.polls[csr]
	d = max(firstPollInterval, min(2*d, maxPollInterval))
	r.polls[csr] = d
	return d
}

// donePolling forgets the waits of csr.
func (r *Reconciler) donePolling(csr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.polls, csr)
}

// now reads the clock.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
