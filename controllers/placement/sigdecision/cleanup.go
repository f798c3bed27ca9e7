package sigdecision

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
)

// cleanupRetry is how often Cleanup tries again after a failure.
const cleanupRetry = 30 * time.Second

// Setup registers with mgr the Reconciler when enabled (the
// SIGPlacementDecision feature gate is on), and Cleanup otherwise.
func Setup(mgr ctrl.Manager, enabled bool) error {
	if enabled {
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(ControllerName)}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up the %s controller: %w", ControllerName, err)
		}
		return nil
	}
	if err := mgr.Add(&Cleanup{Reader: mgr.GetAPIReader(), Client: mgr.GetClient()}); err != nil {
		return fmt.Errorf("add the cleanup of multicluster.x-k8s.io PlacementDecisions: %w", err)
	}
	return nil
}

// Cleanup deletes, once, the mirrors the hub wrote while the
// SIGPlacementDecision feature gate was on: the multicluster.x-k8s.io
// PlacementDecisions labeled x-k8s.io/cluster-manager=open-cluster-management
// whose controller is a cluster.open-cluster-management.io PlacementDecision.
// Left behind, they would no longer follow the scheduler's decisions.
// It runs on the elected hub controller, reads with Reader (uncached, so the
// hub keeps no informer of these objects while the gate is off) and retries
// every 30 s until it succeeds or its context ends; it never stops the
// manager.
type Cleanup struct {
	// Reader lists the mirrors from the API server.
	Reader client.Reader
	// Client deletes them.
	Client client.Client
}

// NeedLeaderElection makes Cleanup run on the elected replica only.
func (c *Cleanup) NeedLeaderElection() bool { return true }

// Start deletes the mirrors and returns when done or when ctx ends.
func (c *Cleanup) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("sigplacementdecision-cleanup")
	_ = wait.PollUntilContextCancel(ctx, cleanupRetry, true, func(ctx context.Context) (bool, error) {
		n, err := c.deleteMirrors(ctx)
		if err != nil {
			log.Error(err, "Deleting the multicluster.x-k8s.io PlacementDecisions of the hub, retrying", "after", cleanupRetry)
			return false, nil
		}
		if n > 0 {
			log.Info("Deleted the multicluster.x-k8s.io PlacementDecisions of the hub: the SIGPlacementDecision feature is off", "count", n)
		}
		return true, nil
	})
	return nil
}

// deleteMirrors deletes every mirror and returns how many it deleted.
func (c *Cleanup) deleteMirrors(ctx context.Context) (int, error) {
	list := &multiclusterv1alpha1.PlacementDecisionList{}
	err := c.Reader.List(ctx, list, client.MatchingLabels{multiclusterv1alpha1.LabelClusterManagerKey: SchedulerName})
	if meta.IsNoMatchError(err) {
		return 0, nil // the CRD is not installed: nothing to clean
	}
	if err != nil {
		return 0, fmt.Errorf("list multicluster.x-k8s.io PlacementDecisions: %w", err)
	}
	n := 0
	for i := range list.Items {
		pd := &list.Items[i]
		if !IsMirror(pd) {
			continue
		}
		if err := c.Client.Delete(ctx, pd, client.Preconditions{UID: &pd.UID}); client.IgnoreNotFound(err) != nil {
			return n, fmt.Errorf("delete multicluster.x-k8s.io PlacementDecision %s: %w", klog.KObj(pd), err)
		}
		n++
	}
	return n, nil
}

// IsMirror reports whether pd is a mirror the hub wrote: IsManaged and
// controlled by a cluster.open-cluster-management.io PlacementDecision.
func IsMirror(pd *multiclusterv1alpha1.PlacementDecision) bool {
	if !IsManaged(pd) {
		return false
	}
	for _, o := range pd.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "PlacementDecision" && o.APIVersion == clusterv1beta1.GroupVersion.String() {
			return true
		}
	}
	return false
}
