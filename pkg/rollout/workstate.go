package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// WorkState is the rollout state of a cluster whose ManifestWork is mw (nil
// when it has none). current says whether mw holds the desired spec; health
// is a condition type the work's manifests must report True for the cluster
// to succeed ("" for none).
//
// A work that is missing or not current is ToApply. Otherwise, looking only
// at conditions observed at the work's generation:
//   - Progressing True and Degraded True: Failed;
//   - Applied or Available False: Failed;
//   - Applied and Available True: Succeeded, unless Progressing is True or
//     the health condition is missing or not True on a manifest reporting it;
//   - anything else: Progressing.
//
// Unlike OCM, Succeeded needs no Progressing condition, so a rollout does not
// stall on works without conditionRules. Since is the later of the spec write
// (annotation) and the deciding conditions' last transitions.
func WorkState(mw *workv1.ManifestWork, current bool, health string) ClusterState {
	if mw == nil || !current {
		return ClusterState{State: ToApply}
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
		return state(Failed, written, progressing, degraded)
	case is(applied, metav1.ConditionFalse):
		return state(Failed, written, applied)
	case is(available, metav1.ConditionFalse):
		return state(Failed, written, available)
	case is(applied, metav1.ConditionTrue) && is(available, metav1.ConditionTrue) && !is(progressing, metav1.ConditionTrue):
		if health == "" {
			return state(Succeeded, written, applied, available, progressing)
		}
		healthy, conds := manifestsHealthy(mw, health)
		if !healthy {
			return state(Progressing, written)
		}
		return state(Succeeded, written, append(conds, applied, available, progressing)...)
	default:
		return state(Progressing, written)
	}
}

// manifestsHealthy reports whether at least one manifest of mw reports
// condition typ and all that report it have it True, with those conditions.
func manifestsHealthy(mw *workv1.ManifestWork, typ string) (bool, []*metav1.Condition) {
	var conds []*metav1.Condition
	for i := range mw.Status.ResourceStatus.Manifests {
		c := meta.FindStatusCondition(mw.Status.ResourceStatus.Manifests[i].Conditions, typ)
		if c == nil {
			continue
		}
		if c.Status != metav1.ConditionTrue {
			return false, nil
		}
		conds = append(conds, c)
	}
	return len(conds) > 0, conds
}

// state returns s since the latest of from and the conditions' transitions.
func state(s State, from time.Time, conds ...*metav1.Condition) ClusterState {
	since := from
	for _, c := range conds {
		if c != nil && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return ClusterState{State: s, Since: since}
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
