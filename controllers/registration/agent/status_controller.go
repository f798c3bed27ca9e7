package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// statusRequest is the one request of the status controller: every event
// leads to a sync of the whole ManagedCluster status.
var statusRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "managedcluster-status"}}

// How often an agent whose cluster is not accepted yet looks again: quickly
// at first (the admin often accepts right after approving the request), then
// every acceptancePollInterval.
const (
	acceptanceFirstPollInterval = 100 * time.Millisecond
	acceptancePollInterval      = 2 * time.Second
)

// statusReconciler syncs the ManagedCluster status on the hub.
type statusReconciler struct{ a *Agent }

// The managed cluster's Nodes (capacity) and ClusterClaims, from the cache.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=clusterclaims,verbs=list;watch

// setupStatusController registers the status controller: it syncs on
// changes of Nodes, Namespaces and ClusterClaims (on the managed cluster) and of the
// Klusterlet (on the management cluster), when the agent connects, and every
// ClusterHealthCheckPeriod. It starts without waiting for any informer
// (lateSource).
func (a *Agent) setupStatusController(mgr manager.Manager) error {
	toStatus := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{statusRequest}
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-status").
		WatchesRawSource(source.Channel(a.triggers, toStatus)).
		WatchesRawSource(lateSource(a.spokeCache, &corev1.Node{})).
		WatchesRawSource(lateSource(a.spokeCache, &corev1.Namespace{})).
		WatchesRawSource(lateSource(mgr.GetCache(), &operatorv1.Klusterlet{}))
	if !a.opts.DisableClusterClaims {
		b = b.WatchesRawSource(lateSource(a.spokeCache, &clusterv1alpha1.ClusterClaim{}))
	}
	err := b.Complete(&statusReconciler{a: a})
	if err != nil {
		return fmt.Errorf("set up the ManagedCluster status controller: %w", err)
	}
	return nil
}

// Reconcile syncs the status once and requeues after the health-check period.
func (r *statusReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	return r.a.syncStatus(ctx)
}

// syncStatus reports the cluster's status on its ManagedCluster with one
// patch, only when something changed. It does nothing while bootstrapping.
func (a *Agent) syncStatus(ctx context.Context) (ctrl.Result, error) {
	conn, id := a.current()
	if conn == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("managedCluster", id.cluster)
	ctx = ctrl.LoggerInto(ctx, log)
	period := ctrl.Result{RequeueAfter: a.opts.ClusterHealthCheckPeriod}

	mc, err := a.readCluster(ctx, conn, id)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		a.reportDegraded(ctx, operatorv1.KlusterletReasonManagedClusterMissing, fmt.Sprintf(
			"ManagedCluster %s is not on the hub (or not readable by %s); it was deleted or denied: run `kubectl ocm join` again to re-register",
			id.cluster, id.subject().CommonName))
		if apierrors.IsForbidden(err) {
			// Right after the first join the hub may not have granted the
			// new identity its role yet: look again soon.
			return ctrl.Result{RequeueAfter: min(a.acceptPoll.next(conn.cred.fingerprint), period.RequeueAfter)}, nil
		}
		return period, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read ManagedCluster %s on the hub: %w", id.cluster, err)
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		a.reportDegraded(ctx, operatorv1.KlusterletReasonHubAcceptancePending, fmt.Sprintf(
			"Waiting for the hub admin to accept cluster %s: run `kubectl ocm accept --clusters %s` on the hub", id.cluster, id.cluster))
		// Keyed by the credential: a new one (after a re-bootstrap) polls
		// quickly again.
		return ctrl.Result{RequeueAfter: min(a.acceptPoll.next(conn.cred.fingerprint), period.RequeueAfter)}, nil
	}

	desired := mc.DeepCopy()
	a.applyStatus(ctx, conn, desired)
	if !equality.Semantic.DeepEqual(mc.Status, desired.Status) {
		err := patch.NewHelper(mc, conn.client).Patch(ctx, desired)
		conn.noteError(err)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("update the status of ManagedCluster %s: %w", id.cluster, err)
		}
		logConditionChanges(ctx, mc.Status.Conditions, desired.Status.Conditions)
	}
	a.reportJoined(ctx, id, conn.cred.config.Host)
	return period, nil
}

// applyStatus computes the agent-owned parts of the status into mc.
func (a *Agent) applyStatus(ctx context.Context, conn *hubConnection, mc *clusterv1.ManagedCluster) {
	log := ctrl.LoggerFrom(ctx)
	gen := mc.Generation
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedClusterJoined, Message: "Managed cluster joined", ObservedGeneration: gen,
	})
	if c := a.availableCondition(ctx); c != nil {
		c.ObservedGeneration = gen
		meta.SetStatusCondition(&mc.Status.Conditions, *c)
	}
	if err := a.applyResources(ctx, mc); err != nil {
		log.Error(err, "Cannot read the cluster's version or capacity")
	}
	if err := a.applyClaims(ctx, conn, mc); err != nil {
		log.Error(err, "Cannot read the cluster's claims")
	}
	if err := a.applyManagedNamespaces(ctx, conn, mc); err != nil {
		log.Error(err, "Cannot apply every managed namespace")
	}
	a.mu.Lock()
	rotation := a.rotation
	a.mu.Unlock()
	if rotation != nil {
		c := *rotation
		c.ObservedGeneration = gen
		meta.SetStatusCondition(&mc.Status.Conditions, c)
	}
}

// logConditionChanges logs the conditions whose status or reason changed.
func logConditionChanges(ctx context.Context, before, after []metav1.Condition) {
	for _, c := range after {
		if old := meta.FindStatusCondition(before, c.Type); old == nil || old.Status != c.Status || old.Reason != c.Reason {
			ctrl.LoggerFrom(ctx).V(2).Info("ManagedCluster condition changed", "type", c.Type, "status", c.Status, "reason", c.Reason)
		}
	}
}
