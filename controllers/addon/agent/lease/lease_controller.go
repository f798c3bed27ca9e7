package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Defaults of the lease check.
const (
	// DefaultGraceRatio multiplies a lease's duration to give the age at
	// which it is stale.
	DefaultGraceRatio = 1.5
	// DefaultDuration is the duration of a lease that sets no
	// leaseDurationSeconds: the period OCM's add-on agents renew at.
	DefaultDuration = 60 * time.Second
)

// controllerName names the controller in logs and metrics.
const controllerName = "addon-lease"

// Reconciler sets the Available condition of the add-ons in Lease mode of
// one cluster.
type Reconciler struct {
	// Hub reads the cluster's ManagedClusterAddOns from the hub session's
	// cache and patches their status.
	Hub client.Client
	// Leases reads Leases of the managed cluster from a cache.
	Leases client.Reader
	// HostingLeases reads, around any cache, the Leases of hosted add-ons
	// (annotation addon.open-cluster-management.io/hosting-cluster-name),
	// whose agents run on the cluster the agent runs on: the hosting
	// cluster in Hosted mode, as in OCM. Nil reads them from Leases.
	HostingLeases client.Reader
	// Cluster is the managed cluster's name, its namespace on the hub.
	Cluster string
	// GraceRatio multiplies a lease's duration to give the age at which it
	// is stale; DefaultGraceRatio when zero.
	GraceRatio float64
	// DefaultDuration is the duration of leases that set none;
	// DefaultDuration when zero.
	DefaultDuration time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewController returns the lease controller of r, watching the cluster's
// ManagedClusterAddOns in hub (the hub session's cache) and the Leases in
// leases (the managed cluster's); the caller starts it. Every call builds
// the controller again under the same name, once per hub session.
func (r *Reconciler) NewController(hub, leases cache.Cache, log logr.Logger) (controller.Controller, error) {
	c, err := hubsession.NewController(controllerName, r, 1, log, "addon")
	if err != nil {
		return nil, err
	}
	if err := c.Watch(source.Kind(hub, &addonv1alpha1.ManagedClusterAddOn{}, &handler.TypedEnqueueRequestForObject[*addonv1alpha1.ManagedClusterAddOn]{})); err != nil {
		return nil, fmt.Errorf("watch ManagedClusterAddOns: %w", err)
	}
	if err := c.Watch(source.Kind(leases, &coordinationv1.Lease{}, handler.TypedEnqueueRequestsFromMapFunc(r.addonOf))); err != nil {
		return nil, fmt.Errorf("watch Leases: %w", err)
	}
	return c, nil
}

// addonOf maps a Lease to the add-on whose lease it is: the
// ManagedClusterAddOn of the lease's name whose install namespace is the
// lease's namespace.
func (r *Reconciler) addonOf(ctx context.Context, l *coordinationv1.Lease) []reconcile.Request {
	key := types.NamespacedName{Namespace: r.Cluster, Name: l.Name}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Hub.Get(ctx, key, mca); err != nil || mca.AgentInstallNamespace() != l.Namespace {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// The cluster's ManagedClusterAddOns on the hub are read and their status
// patched with the cluster's agent identity (config/hub/20-agent-rbac.yaml);
// on the managed cluster the add-ons' Leases are watched in every
// namespace but kube-node-lease.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=list;watch

// Reconcile sets the Available condition of one add-on in Lease mode from
// its lease, and asks to come back when the lease turns stale.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Hub.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if mode := mca.Status.HealthCheck.Mode; mode != "" && mode != addonv1alpha1.HealthCheckModeLease {
		return ctrl.Result{}, nil
	}
	ns := mca.AgentInstallNamespace()
	var lease *coordinationv1.Lease
	l := &coordinationv1.Lease{}
	leases, hosted := r.Leases, r.HostingLeases != nil && mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] != ""
	if hosted {
		leases = r.HostingLeases
	}
	switch err := leases.Get(ctx, types.NamespacedName{Namespace: ns, Name: mca.Name}, l); {
	case err == nil:
		lease = l
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("read Lease %s/%s: %w", ns, mca.Name, err)
	}
	cond, staleIn := Availability(mca.Name, lease, r.now(), r.grace(lease))
	cond.ObservedGeneration = mca.Generation
	h := patch.NewHelper(mca, r.Hub)
	if changed := meta.SetStatusCondition(&mca.Status.Conditions, cond); changed {
		ctrl.LoggerFrom(ctx).V(2).Info("Add-on availability changed", "status", cond.Status, "reason", cond.Reason, "lease", ns+"/"+mca.Name)
	}
	if err := h.Patch(ctx, mca); err != nil {
		return ctrl.Result{}, err
	}
	if hosted && (staleIn <= 0 || staleIn > HostingLeasePeriod) {
		// The hosting cluster's Leases are not watched: look again.
		staleIn = HostingLeasePeriod
	}
	if staleIn > 0 {
		return ctrl.Result{RequeueAfter: staleIn}, nil
	}
	return ctrl.Result{}, nil
}

// HostingLeasePeriod is how often the lease of a hosted add-on, on the
// hosting cluster, is read: those Leases are read by name, not watched,
// since the agent may read Leases there only in namespaces granted to it.
const HostingLeasePeriod = 30 * time.Second

// grace returns the age at which lease is stale: its duration (or the
// default) times the grace ratio.
func (r *Reconciler) grace(lease *coordinationv1.Lease) time.Duration {
	ratio, d := r.GraceRatio, r.DefaultDuration
	if ratio <= 0 {
		ratio = DefaultGraceRatio
	}
	if d <= 0 {
		d = DefaultDuration
	}
	if lease != nil && lease.Spec.LeaseDurationSeconds != nil && *lease.Spec.LeaseDurationSeconds > 0 {
		d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	return time.Duration(float64(d) * ratio)
}

// now reads the clock.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Availability returns the Available condition of addon (without
// ObservedGeneration) from its lease (nil when there is none) at now, and,
// while the lease is fresh, how long until it turns stale: grace after its
// last renewal (renewTime, else acquireTime). A lease never renewed is
// stale.
func Availability(addon string, lease *coordinationv1.Lease, now time.Time, grace time.Duration) (metav1.Condition, time.Duration) {
	cond := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable}
	if lease == nil {
		cond.Status, cond.Reason = metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonLeaseNotFound
		cond.Message = fmt.Sprintf("The status of %s add-on is unknown.", addon)
		return cond, 0
	}
	renewed := lease.Spec.RenewTime
	if renewed == nil {
		renewed = lease.Spec.AcquireTime
	}
	if renewed != nil {
		if staleIn := renewed.Add(grace).Sub(now); staleIn > 0 {
			cond.Status, cond.Reason = metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonLeaseUpdated
			cond.Message = fmt.Sprintf("%s add-on is available.", addon)
			return cond, staleIn
		}
	}
	cond.Status, cond.Reason = metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped
	cond.Message = fmt.Sprintf("%s add-on is not available.", addon)
	return cond, 0
}
