package workttl

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

func TestDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	work := func(ttl *int64, complete metav1.ConditionStatus, completedAgo time.Duration, mutate ...func(*workv1.ManifestWork)) *workv1.ManifestWork {
		mw := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{DeleteOption: &workv1.DeleteOption{TTLSecondsAfterFinished: ttl}}}
		if complete != "" {
			mw.Status.Conditions = []metav1.Condition{{Type: workv1.WorkComplete, Status: complete,
				LastTransitionTime: metav1.NewTime(now.Add(-completedAgo))}}
		}
		for _, m := range mutate {
			m(mw)
		}
		return mw
	}
	tests := []struct {
		name     string
		mw       *workv1.ManifestWork
		wantDue  bool
		wantWait time.Duration
	}{
		{name: "no delete option", mw: &workv1.ManifestWork{}},
		{name: "no TTL", mw: work(nil, metav1.ConditionTrue, time.Hour)},
		{name: "not complete", mw: work(ptr.To[int64](0), metav1.ConditionFalse, time.Hour)},
		{name: "no Complete condition", mw: work(ptr.To[int64](0), "", 0)},
		{name: "TTL 0 is due at once", mw: work(ptr.To[int64](0), metav1.ConditionTrue, 0), wantDue: true},
		{name: "TTL passed", mw: work(ptr.To[int64](60), metav1.ConditionTrue, 61*time.Second), wantDue: true},
		{name: "TTL exactly reached", mw: work(ptr.To[int64](60), metav1.ConditionTrue, 60*time.Second), wantDue: true},
		{name: "TTL not reached waits the rest", mw: work(ptr.To[int64](60), metav1.ConditionTrue, 20*time.Second), wantWait: 40 * time.Second},
		{name: "being deleted", mw: work(ptr.To[int64](0), metav1.ConditionTrue, time.Hour, func(mw *workv1.ManifestWork) {
			mw.DeletionTimestamp = ptr.To(metav1.NewTime(now))
		})},
		{name: "managed by a replica set", mw: work(ptr.To[int64](0), metav1.ConditionTrue, time.Hour, func(mw *workv1.ManifestWork) {
			mw.Labels = map[string]string{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "ns.set"}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, due := Due(tt.mw, now)
			if due != tt.wantDue || wait != tt.wantWait {
				t.Errorf("Due() = (%v, %v), want (%v, %v)", wait, due, tt.wantWait, tt.wantDue)
			}
		})
	}
}
