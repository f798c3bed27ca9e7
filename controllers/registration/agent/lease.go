package agent

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

const (
	// leaseJitter is the largest fraction added to the renewal interval.
	leaseJitter = 0.1
	// leaseRetryInterval is the wait before the next attempt while the
	// cluster is not accepted, the lease does not exist yet, or after an error.
	leaseRetryInterval = time.Second
)

// renewLease renews the cluster's lease on the hub once per
// leaseDurationSeconds (plus at most 10 % jitter, so never more often than
// OCM's klusterlet) while the hub accepts the cluster, until ctx ends; at
// once when woken (wakeLease: the hub accepted the cluster or its spec
// changed). The hub marks the cluster Unknown two lease durations after the
// last renewal, which leaves a slow or retried renewal 0.9 lease durations.
// When renewals succeed again after failing, it asks for a status sync.
func (a *Agent) renewLease(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("lease", clusterv1.LeaseName)
	ctx = ctrl.LoggerInto(ctx, log)
	renewing := false
	for {
		next, ok := a.renewLeaseOnce(ctx)
		if ok != renewing {
			renewing = ok
			log.V(2).Info("Lease renewal state changed", "renewing", ok, "interval", next)
			// While renewals failed the hub may have marked the cluster
			// Unknown; report the status now rather than after the status
			// controller's back-off, which grows with the outage.
			if ok {
				a.trigger()
			}
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-a.leaseWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// renewLeaseOnce renews the lease once if the cluster is accepted, and
// returns when to renew next and whether it renewed.
func (a *Agent) renewLeaseOnce(ctx context.Context) (time.Duration, bool) {
	log := ctrl.LoggerFrom(ctx)
	conn, id := a.current()
	if conn == nil {
		return leaseRetryInterval, false
	}
	mc, err := a.readCluster(ctx, conn, id)
	if err != nil {
		if ctx.Err() == nil {
			log.V(1).Info("Cannot read the ManagedCluster", "error", err.Error())
		}
		return leaseRetryInterval, false
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
		return leaseRetryInterval, false
	}
	err = conn.lease.Renew(ctx, conn.client, id.cluster, a.now())
	conn.noteError(err)
	if err != nil {
		if apierrors.IsNotFound(err) {
			log.V(1).Info("The hub has not created the lease yet")
		} else if ctx.Err() == nil {
			log.Error(err, "Cannot renew the lease")
		}
		return leaseRetryInterval, false
	}
	a.noteContact()
	return wait.Jitter(renewInterval(mc.Spec.LeaseDurationSeconds), leaseJitter), true
}

// renewInterval returns the lease duration (0 means 60 s).
func renewInterval(leaseDurationSeconds int32) time.Duration {
	if leaseDurationSeconds <= 0 {
		leaseDurationSeconds = clusterv1.DefaultLeaseDurationSeconds
	}
	return time.Duration(leaseDurationSeconds) * time.Second
}
