package lease

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

var now = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// lease builds a Lease renewed (or, with acquired, acquired) ago before now,
// with duration seconds (0: unset).
func lease(renewedAgo time.Duration, acquired bool, duration int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	t := &metav1.MicroTime{Time: now.Add(-renewedAgo)}
	if acquired {
		l.Spec.AcquireTime = t
	} else {
		l.Spec.RenewTime = t
	}
	if duration > 0 {
		l.Spec.LeaseDurationSeconds = ptr.To(duration)
	}
	return l
}

func TestAvailability(t *testing.T) {
	tests := []struct {
		name        string
		lease       *coordinationv1.Lease
		grace       time.Duration
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
		wantStaleIn time.Duration
	}{
		{"no lease", nil, time.Minute, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonLeaseNotFound, "The status of helloworld add-on is unknown.", 0},
		{"fresh", lease(10*time.Second, false, 0), time.Minute, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonLeaseUpdated, "helloworld add-on is available.", 50 * time.Second},
		{"acquired, never renewed", lease(10*time.Second, true, 0), time.Minute, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonLeaseUpdated, "helloworld add-on is available.", 50 * time.Second},
		{"just stale", lease(time.Minute, false, 0), time.Minute, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped, "helloworld add-on is not available.", 0},
		{"long stale", lease(time.Hour, false, 0), time.Minute, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped, "helloworld add-on is not available.", 0},
		{"never renewed nor acquired", &coordinationv1.Lease{}, time.Minute, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped, "helloworld add-on is not available.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond, staleIn := Availability("helloworld", tt.lease, now, tt.grace)
			if cond.Type != addonv1alpha1.ManagedClusterAddOnConditionAvailable || cond.Status != tt.wantStatus ||
				cond.Reason != tt.wantReason || cond.Message != tt.wantMessage || staleIn != tt.wantStaleIn {
				t.Errorf("Availability = %+v, stale in %s; want %s %s %q, stale in %s", cond, staleIn, tt.wantStatus, tt.wantReason, tt.wantMessage, tt.wantStaleIn)
			}
		})
	}
}

func TestGrace(t *testing.T) {
	tests := []struct {
		name  string
		r     Reconciler
		lease *coordinationv1.Lease
		want  time.Duration
	}{
		{"defaults, lease without duration", Reconciler{}, lease(0, false, 0), 90 * time.Second},
		{"defaults, no lease", Reconciler{}, nil, 90 * time.Second},
		{"lease's own duration", Reconciler{}, lease(0, false, 2), 3 * time.Second},
		{"configured ratio", Reconciler{GraceRatio: 5}, lease(0, false, 60), 5 * time.Minute},
		{"configured default duration", Reconciler{GraceRatio: 2, DefaultDuration: 10 * time.Second}, lease(0, false, 0), 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.grace(tt.lease); got != tt.want {
				t.Errorf("grace = %s, want %s", got, tt.want)
			}
		})
	}
}
