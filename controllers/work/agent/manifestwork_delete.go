package agent

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// reconcileDelete removes what a deleted ManifestWork applied: it reports
// Deleting, releases the objects its delete option orphans, deletes the
// AppliedManifestWork (whose finalizer deletes the owned objects and waits
// for them) and, once that record is gone, removes the work's finalizer.
func (r *workReconciler) reconcileDelete(ctx context.Context, work *workv1.ManifestWork) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	h := patch.NewHelper(work, r.hub)
	meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{
		Type: workv1.WorkDeleting, Status: metav1.ConditionTrue, ObservedGeneration: work.Generation,
		Reason: workv1.WorkDeletingReason, Message: msgWorkDeleting,
	})
	if err := h.Patch(ctx, work); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}

	name := workv1.AppliedManifestWorkName(r.hubHash, work.Name)
	amw := &workv1.AppliedManifestWork{}
	err := r.spoke.Get(ctx, types.NamespacedName{Name: name}, amw)
	switch {
	case apierrors.IsNotFound(err):
		// The cache may lag behind a record created a moment ago.
		if err := r.spokeReader.Get(ctx, types.NamespacedName{Name: name}, amw); !apierrors.IsNotFound(err) {
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("read AppliedManifestWork %s: %w", name, err)
			}
			return r.deleteAppliedWork(ctx, work, amw)
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read AppliedManifestWork %s: %w", name, err)
	default:
		return r.deleteAppliedWork(ctx, work, amw)
	}

	h = patch.NewHelper(work, r.hub)
	controllerutil.RemoveFinalizer(work, workv1.ManifestWorkFinalizer)
	if err := h.Patch(ctx, work); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	r.failures.Forget(client.ObjectKeyFromObject(work))
	r.watcher.Forget(work.Name)
	r.drifts.forget(client.ObjectKeyFromObject(work))
	log.V(2).Info("ManifestWork cleaned up")
	return ctrl.Result{}, nil
}

// deleteAppliedWork releases the objects the work's delete option orphans
// and deletes the AppliedManifestWork, then waits for its finalizer.
func (r *workReconciler) deleteAppliedWork(ctx context.Context, work *workv1.ManifestWork, amw *workv1.AppliedManifestWork) (ctrl.Result, error) {
	if amw.DeletionTimestamp.IsZero() {
		// The delete option may have changed just before the deletion,
		// before the objects' owner references were brought in line.
		var errs []error
		for _, res := range amw.Status.AppliedResources {
			if !apply.OwnedByTheWork(res.ResourceIdentifier, work.Spec.DeleteOption) {
				if err := r.applier.Release(ctx, res, amw.UID); err != nil {
					errs = append(errs, fmt.Errorf("orphan %s: %w", res.ResourceIdentifier, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return ctrl.Result{}, err
		}
		uid := amw.UID
		err := r.spoke.Delete(ctx, amw, client.Preconditions{UID: &uid})
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete AppliedManifestWork %s: %w", amw.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Deleting the AppliedManifestWork", "appliedManifestWork", amw.Name)
	}
	// The record's deletion event brings the work back; look again later
	// in case that event is missed.
	return ctrl.Result{RequeueAfter: deletionCheckInterval}, nil
}
