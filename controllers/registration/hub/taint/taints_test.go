package taint

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestDesired(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(earlier.Add(time.Hour))
	unreachable := clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnreachable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: earlier}
	unavailable := clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnavailable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: earlier}
	user := clusterv1.Taint{Key: "example.com/gpu", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: earlier}
	tests := []struct {
		name      string
		taints    []clusterv1.Taint
		available metav1.ConditionStatus
		wantKeys  []string
		wantTimes []metav1.Time
	}{
		{"unknown adds unreachable stamped now", nil, metav1.ConditionUnknown, []string{unreachable.Key}, []metav1.Time{now}},
		{"missing condition counts as unknown", nil, "", []string{unreachable.Key}, []metav1.Time{now}},
		{"existing taint keeps its time", []clusterv1.Taint{unreachable}, metav1.ConditionUnknown, []string{unreachable.Key}, []metav1.Time{earlier}},
		{"false swaps unreachable for unavailable", []clusterv1.Taint{unreachable}, metav1.ConditionFalse, []string{unavailable.Key}, []metav1.Time{now}},
		{"true removes both, keeps user taints", []clusterv1.Taint{user, unavailable}, metav1.ConditionTrue, []string{user.Key}, []metav1.Time{earlier}},
		{"true with nothing", nil, metav1.ConditionTrue, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Desired(tt.taints, tt.available, now)
			if len(got) != len(tt.wantKeys) {
				t.Fatalf("Desired = %+v, want keys %v", got, tt.wantKeys)
			}
			for i, taint := range got {
				if taint.Key != tt.wantKeys[i] || !taint.TimeAdded.Equal(&tt.wantTimes[i]) {
					t.Errorf("taint %d = %s at %s, want %s at %s", i, taint.Key, taint.TimeAdded, tt.wantKeys[i], tt.wantTimes[i])
				}
				if hubManaged(taint.Key) && taint.Effect != clusterv1.TaintEffectNoSelect {
					t.Errorf("hub taint %s has effect %s", taint.Key, taint.Effect)
				}
			}
		})
	}
}
