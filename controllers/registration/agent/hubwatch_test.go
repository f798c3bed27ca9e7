package agent

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestNeedsAction(t *testing.T) {
	cluster := func(generation int64, accepted bool) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Generation: generation}}
		if accepted {
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}}
		}
		return mc
	}
	tests := []struct {
		name          string
		before, after *clusterv1.ManagedCluster
		want          bool
	}{
		{"accepted", cluster(1, false), cluster(1, true), true},
		{"no longer accepted", cluster(1, true), cluster(1, false), true},
		{"spec changed, such as the lease duration", cluster(1, true), cluster(2, true), true},
		{"status written, such as by the agent itself", cluster(2, true), cluster(2, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsAction(tt.before, tt.after); got != tt.want {
				t.Errorf("needsAction = %v, want %v", got, tt.want)
			}
		})
	}
}
