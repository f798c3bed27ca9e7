package replicaset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// The gates of staged rollouts are opened by RolloutApprovals, which the
// controller reads from the cache and deletes once their revision is gone.
// +kubebuilder:rbac:groups=rollout.kubectl-ocm.io,resources=rolloutapprovals,verbs=list;watch;delete

// Event reasons of rollout control.
const (
	eventAborted    = "RolloutAborted"
	eventRolledBack = "RolloutRolledBack"
)

// control is the rollout control of one reconcile: the set's policy (from
// its annotations) and current revision.
type control struct {
	policy rolloutv1alpha1.Policy
	// err is the policy's error: the rollout is held until it is fixed.
	err error
	rev revisions
}

// aborted reports whether the current revision's rollout was aborted.
func (c *control) aborted() bool { return c.policy.Aborted != 0 && c.policy.Aborted == c.rev.number }

// listApprovals returns the RolloutApprovals of mwrs, and deletes those of
// revisions the set no longer keeps.
func (r *Reconciler) listApprovals(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet, rev revisions) ([]rolloutv1alpha1.RolloutApproval, error) {
	list := &rolloutv1alpha1.RolloutApprovalList{}
	if err := r.Client.List(ctx, list, client.InNamespace(mwrs.Namespace)); err != nil {
		return nil, fmt.Errorf("list the RolloutApprovals of namespace %s: %w", mwrs.Namespace, err)
	}
	var out []rolloutv1alpha1.RolloutApproval
	for _, a := range list.Items {
		if a.Spec.ManifestWorkReplicaSet != mwrs.Name {
			continue
		}
		if a.Spec.Revision < rev.number && !rev.kept[a.Spec.Revision] {
			if err := r.Client.Delete(ctx, &a, client.Preconditions{UID: &a.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return nil, fmt.Errorf("delete RolloutApproval %s/%s of a revision no longer kept: %w", a.Namespace, a.Name, err)
			}
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// failRollout applies the failure strategy of a rollout whose failures
// passed maxFailures: Abort marks the current revision aborted; Rollback
// also restores the previous revision (the changed clusters get it without
// waiting at a gate), or only aborts when there is none. The set is
// changed in memory; the reconcile's patch writes it.
func (r *Reconciler) failRollout(mwrs *workv1alpha1.ManifestWorkReplicaSet, ctl *control) error {
	prev := ctl.rev.previous
	if ctl.policy.FailureStrategy != rolloutv1alpha1.FailureRollback {
		prev = nil
	}
	if err := revision.AbortTo(mwrs, ctl.rev.number, prev); err != nil {
		return err
	}
	ctl.policy.Aborted = ctl.rev.number
	if prev == nil {
		r.Recorder.Eventf(mwrs, nil, corev1.EventTypeWarning, eventAborted, "Abort",
			"failures passed maxFailures: the rollout of revision %d is aborted (failure strategy %s)", ctl.rev.number, ctl.policy.FailureStrategy)
		return nil
	}
	r.Recorder.Eventf(mwrs, nil, corev1.EventTypeWarning, eventRolledBack, "Rollback",
		"failures passed maxFailures: the rollout of revision %d is aborted and the set rolled back to revision %d (%s)",
		ctl.rev.number, prev.Revision, prev.Labels[revision.HashLabel])
	return nil
}
