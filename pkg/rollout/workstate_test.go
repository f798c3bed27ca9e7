package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

var (
	written = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	later   = written.Add(time.Minute)
)

// cond builds a condition observed at gen that changed at t.
func cond(typ string, status metav1.ConditionStatus, gen int64, t time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(t), Reason: "R"}
}

// work builds a ManifestWork at generation 2 with spec hash "h".
func work(conds ...metav1.Condition) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Generation: 2, Annotations: map[string]string{
			workv1alpha1.ManifestWorkSpecHashAnnotationKey:    "h",
			workv1alpha1.ManifestWorkSpecWrittenAnnotationKey: written.Format(time.RFC3339),
		}},
		Status: workv1.ManifestWorkStatus{Conditions: conds},
	}
}

func TestWorkState(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	tests := []struct {
		name   string
		work   *workv1.ManifestWork
		hash   string
		health string
		want   State
		since  time.Time
	}{
		{name: "no work", hash: "h", want: ToApply},
		{name: "other spec", work: work(), hash: "other", want: ToApply},
		{name: "no conditions", work: work(), hash: "h", want: Progressing, since: written},
		{name: "applied and available", hash: "h", want: Succeeded, since: later,
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, later))},
		{name: "success before the spec write counts from the write", hash: "h", want: Succeeded, since: written,
			work: work(cond(workv1.WorkApplied, T, 2, written.Add(-time.Hour)), cond(workv1.WorkAvailable, T, 2, written.Add(-time.Hour)))},
		{name: "stale generation", hash: "h", want: Progressing, since: written,
			work: work(cond(workv1.WorkApplied, T, 1, written), cond(workv1.WorkAvailable, T, 1, written))},
		{name: "applied false", hash: "h", want: Failed, since: later,
			work: work(cond(workv1.WorkApplied, F, 2, later))},
		{name: "available false", hash: "h", want: Failed, since: later,
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, F, 2, later))},
		{name: "progressing true keeps it progressing", hash: "h", want: Progressing, since: written,
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, written), cond(workv1.WorkProgressing, T, 2, written))},
		{name: "progressing and degraded: failed", hash: "h", want: Failed, since: later,
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, written),
				cond(workv1.WorkProgressing, T, 2, written), cond(workv1.WorkDegraded, T, 2, later))},
		{name: "progressing false: succeeded from its transition", hash: "h", want: Succeeded, since: later.Add(time.Minute),
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, later), cond(workv1.WorkProgressing, F, 2, later.Add(time.Minute)))},
		{name: "health condition missing: progressing", hash: "h", health: "Healthy", want: Progressing, since: written,
			work: work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, later))},
		{name: "health condition false: progressing", hash: "h", health: "Healthy", want: Progressing, since: written,
			work: withManifests(work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, later)),
				cond("Healthy", T, 2, later), cond("Healthy", F, 2, later))},
		{name: "health condition true everywhere it is reported: succeeded from its transition", hash: "h", health: "Healthy",
			want: Succeeded, since: later.Add(time.Minute),
			work: withManifests(work(cond(workv1.WorkApplied, T, 2, written), cond(workv1.WorkAvailable, T, 2, later)),
				cond("Healthy", T, 2, later.Add(time.Minute)), cond("Other", F, 2, later))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current := tt.work != nil && tt.work.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] == tt.hash
			got := WorkState(tt.work, current, tt.health)
			if got.State != tt.want || !got.Since.Equal(tt.since) {
				t.Errorf("WorkState = %s since %v, want %s since %v", got.State, got.Since, tt.want, tt.since)
			}
		})
	}
}

// withManifests gives mw one manifest per condition.
func withManifests(mw *workv1.ManifestWork, conds ...metav1.Condition) *workv1.ManifestWork {
	for i, c := range conds {
		mw.Status.ResourceStatus.Manifests = append(mw.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Ordinal: int32(i)}, Conditions: []metav1.Condition{c}})
	}
	return mw
}
