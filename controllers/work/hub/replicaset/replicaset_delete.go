package replicaset

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// reconcileDelete deletes the ManifestWorks of a ManifestWorkReplicaSet being
// deleted and then drops its finalizer: at once with cascadeDeletionPolicy
// Background, once every ManifestWork is gone with Foreground.
func (r *Reconciler) reconcileDelete(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer) {
		return ctrl.Result{}, nil
	}
	works, err := r.listWorks(ctx, mwrs)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, mw := range works {
		if err := r.deleteWork(ctx, setKey(mwrs), mw); err != nil {
			return ctrl.Result{}, err
		}
	}
	remaining := len(works)
	if mwrs.Spec.CascadeDeletionPolicy == workv1alpha1.Foreground && remaining > 0 {
		// The ManifestWork watch brings the MWRS back as they go.
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for ManifestWorks to be deleted", "remaining", remaining)
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(mwrs, r.Client)
	controllerutil.RemoveFinalizer(mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer)
	if err := h.Patch(ctx, mwrs); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("remove finalizer of %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	return ctrl.Result{}, nil
}
