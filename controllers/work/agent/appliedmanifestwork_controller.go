package agent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// finalizeCheckInterval is how often a deleted AppliedManifestWork looks
// again at the objects it is waiting for.
const finalizeCheckInterval = 500 * time.Millisecond

// appliedWorkReconciler finalizes deleted AppliedManifestWorks: it deletes
// the objects they own and waits for them, then removes the finalizer. That
// needs no hub, so it runs whether or not the agent is connected. While a
// hub session is connected it also evicts the records of works gone from
// the hub.
type appliedWorkReconciler struct {
	client  client.Client
	applier *apply.Applier
	// notify tells the ManifestWork controller that a record is gone.
	notify func(name string)
	// hub is the connected hub (nil while there is none) and grace the
	// eviction grace period (appliedmanifestwork_eviction.go).
	hub   *atomic.Pointer[hubView]
	grace time.Duration
	now   func() time.Time
}

// AppliedManifestWorks, the agent's records of what it applied: created and
// read again from the API server by the ManifestWork controller, finalized,
// evicted and deleted here.
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=appliedmanifestworks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=appliedmanifestworks/status,verbs=patch

// setupAppliedWorkController adds the AppliedManifestWork controller to mgr.
// It watches the managed cluster's cache, which is mgr's own in Default mode.
func (a *Agent) setupAppliedWorkController(mgr manager.Manager) error {
	r := &appliedWorkReconciler{client: a.spoke, applier: a.applier, notify: a.notifyApplied,
		hub: &a.hub, grace: a.opts.EvictionGracePeriod, now: time.Now}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("appliedmanifestwork-finalizer").
		WatchesRawSource(source.Kind(a.managed.GetCache(), &workv1.AppliedManifestWork{},
			&handler.TypedEnqueueRequestForObject[*workv1.AppliedManifestWork]{})).
		WatchesRawSource(source.Channel(a.evictEvents, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: a.opts.AppliedWorkWorkers, SkipNameValidation: ptr.To(true)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the AppliedManifestWork controller: %w", err)
	}
	return nil
}

// Reconcile finalizes one deleted AppliedManifestWork, or evicts one whose
// ManifestWork is gone from the hub.
func (r *appliedWorkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	amw := &workv1.AppliedManifestWork{}
	if err := r.client.Get(ctx, req.NamespacedName, amw); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.notify(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if amw.DeletionTimestamp.IsZero() {
		return r.reconcileEviction(ctx, amw)
	}
	if !controllerutil.ContainsFinalizer(amw, workv1.AppliedManifestWorkFinalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	waiting := 0
	for _, res := range amw.Status.AppliedResources {
		gone, err := r.applier.Remove(ctx, res, amw.UID)
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", res.ResourceIdentifier, err))
		}
		if !gone {
			waiting++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if waiting > 0 {
		log.V(2).Info("Waiting for applied resources to be deleted", "remaining", waiting)
		return ctrl.Result{RequeueAfter: finalizeCheckInterval}, nil
	}
	h := patch.NewHelper(amw, r.client)
	controllerutil.RemoveFinalizer(amw, workv1.AppliedManifestWorkFinalizer)
	if err := h.Patch(ctx, amw); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	log.V(2).Info("AppliedManifestWork finalized")
	r.notify(req.Name)
	return ctrl.Result{}, nil
}
