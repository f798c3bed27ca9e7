package replicaset

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

// clusterState is the rollout state of a cluster whose ManifestWork is mw
// (nil when it has none) when its desired spec hashes to wantHash.
//
// A work that is missing or carries another spec hash is ToApply. Otherwise,
// looking only at conditions observed at the work's generation:
//   - Progressing True and Degraded True: Failed;
//   - Applied or Available False: Failed;
//   - Applied and Available True: Succeeded, unless Progressing is True;
//   - anything else: Progressing.
//
// Unlike OCM, Succeeded needs no Progressing condition, so a rollout does not
// stall on works without conditionRules. Since is the later of the spec write
// (annotation) and the deciding conditions' last transitions.
func clusterState(mw *workv1.ManifestWork, wantHash string) rollout.ClusterState {
	if mw == nil || mw.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] != wantHash {
		return rollout.ClusterState{State: rollout.ToApply}
	}
	written := specWrittenAt(mw)
	cond := func(typ string) *metav1.Condition {
		c := meta.FindStatusCondition(mw.Status.Conditions, typ)
		if c == nil || c.ObservedGeneration != mw.Generation {
			return nil
		}
		return c
	}
	is := func(c *metav1.Condition, s metav1.ConditionStatus) bool { return c != nil && c.Status == s }
	applied, available := cond(workv1.WorkApplied), cond(workv1.WorkAvailable)
	progressing, degraded := cond(workv1.WorkProgressing), cond(workv1.WorkDegraded)
	switch {
	case is(progressing, metav1.ConditionTrue) && is(degraded, metav1.ConditionTrue):
		return state(rollout.Failed, written, progressing, degraded)
	case is(applied, metav1.ConditionFalse):
		return state(rollout.Failed, written, applied)
	case is(available, metav1.ConditionFalse):
		return state(rollout.Failed, written, available)
	case is(applied, metav1.ConditionTrue) && is(available, metav1.ConditionTrue) && !is(progressing, metav1.ConditionTrue):
		return state(rollout.Succeeded, written, applied, available, progressing)
	default:
		return state(rollout.Progressing, written)
	}
}

// state returns s since the latest of from and the conditions' transitions.
func state(s rollout.State, from time.Time, conds ...*metav1.Condition) rollout.ClusterState {
	since := from
	for _, c := range conds {
		if c != nil && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return rollout.ClusterState{State: s, Since: since}
}

// specWrittenAt is when the controller last wrote mw's spec, from its
// annotation, falling back to the work's creation.
func specWrittenAt(mw *workv1.ManifestWork) time.Time {
	if v := mw.Annotations[workv1alpha1.ManifestWorkSpecWrittenAnnotationKey]; v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return mw.CreationTimestamp.Time
}

// conditionTrue reports whether mw has condition typ True at its generation.
func conditionTrue(mw *workv1.ManifestWork, typ string) bool {
	c := meta.FindStatusCondition(mw.Status.Conditions, typ)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == mw.Generation
}
