package lease

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// eventAvailableUnknown is recorded when a cluster's lease goes stale.
const eventAvailableUnknown = "AvailableUnknown"

// Reconciler maintains the Available and ClockSynced conditions of accepted
// ManagedClusters from their leases.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on ManagedClusters.
	Recorder events.EventRecorder
	// GraceRatio is --lease-grace-ratio; zero means DefaultGraceRatio.
	GraceRatio float64
	// Clock is the hub's clock; nil means the real one.
	Clock clock.PassiveClock
}

// Cluster leases: only those named managed-cluster-lease are watched (the
// cache's field selector); a missing one is created on acceptance.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters/status,verbs=patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,resourceNames=managed-cluster-lease,verbs=list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create

// SetupWithManager registers the reconciler; a Lease change reconciles the
// cluster named by its namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("lease").
		For(&clusterv1.ManagedCluster{}).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			if obj.GetName() != clusterv1.LeaseName {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetNamespace()}}}
		})).
		Complete(r)
}

// Reconcile creates the cluster's lease when missing and reports whether it
// is being renewed; it requeues itself for the moment the lease goes stale.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || !cluster.Spec.HubAcceptsClient || !cluster.IsAccepted() {
		return ctrl.Result{}, nil
	}
	renewed, err := r.renewTime(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.now()
	duration := cluster.Spec.LeaseDuration()
	expiry := Expiry(renewed, duration, r.graceRatio())
	h := patch.NewHelper(cluster, r.Client)
	if !now.Before(expiry) {
		r.setUnknown(ctx, cluster)
	} else {
		setClockSynced(cluster, renewed, now, duration)
	}
	if err := h.Patch(ctx, cluster); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	if now.Before(expiry) {
		return ctrl.Result{RequeueAfter: expiry.Sub(now)}, nil
	}
	return ctrl.Result{}, nil
}

// renewTime returns the last renewal of the cluster's lease, creating the
// lease (renewed now) when it does not exist.
func (r *Reconciler) renewTime(ctx context.Context, cluster *clusterv1.ManagedCluster) (time.Time, error) {
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Name, Name: clusterv1.LeaseName}, lease)
	if apierrors.IsNotFound(err) {
		lease = newLease(cluster.Name, r.now())
		if err := r.Client.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
			return time.Time{}, fmt.Errorf("create lease %s/%s: %w", cluster.Name, clusterv1.LeaseName, err)
		}
		return lease.Spec.RenewTime.Time, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("get lease %s/%s: %w", cluster.Name, clusterv1.LeaseName, err)
	}
	if lease.Spec.RenewTime != nil {
		return lease.Spec.RenewTime.Time, nil
	}
	return lease.CreationTimestamp.Time, nil
}

// newLease renders the cluster's lease, renewed at now.
func newLease(cluster string, now time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: clusterv1.LeaseName, Namespace: cluster,
			Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(clusterv1.LeaseName),
			RenewTime:      &metav1.MicroTime{Time: now},
		},
	}
}

// setUnknown reports that the agent stopped renewing the lease.
func (r *Reconciler) setUnknown(ctx context.Context, cluster *clusterv1.ManagedCluster) {
	cond := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if cond == nil || cond.Status != metav1.ConditionUnknown {
		ctrl.LoggerFrom(ctx).V(2).Info("Lease is stale; cluster availability unknown", "cluster", cluster.Name)
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, eventAvailableUnknown, "CheckLease",
			"the availability of managed cluster %s is unknown: its registration agent stopped updating its lease", cluster.Name)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown,
		Reason: clusterv1.ReasonManagedClusterLeaseUpdateStopped, Message: "Registration agent stopped updating its lease.",
		ObservedGeneration: cluster.Generation,
	})
}

// setClockSynced sets ManagedClusterConditionClockSynced from a fresh lease.
func setClockSynced(cluster *clusterv1.ManagedCluster, renewed, now time.Time, duration time.Duration) {
	cond := metav1.Condition{
		Type: clusterv1.ManagedClusterConditionClockSynced, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedClusterClockSynced, Message: "The clock of the managed cluster is synced with the hub.",
		ObservedGeneration: cluster.Generation,
	}
	if cluster.Annotations[clusterv1.SkipClockSyncCheckAnnotationKey] != "true" && !ClockSynced(renewed, now, duration) {
		cond.Status, cond.Reason = metav1.ConditionFalse, clusterv1.ReasonManagedClusterClockOutOfSync
		cond.Message = "The clock of hub and agent is out of sync. This may cause the Unknown status and affect agent functionalities."
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, cond)
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func (r *Reconciler) graceRatio() float64 {
	if r.GraceRatio <= 0 {
		return DefaultGraceRatio
	}
	return r.GraceRatio
}
