package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLeaseDuration(t *testing.T) {
	tests := []struct {
		name      string
		seconds   int32
		wantLease time.Duration
		wantGrace time.Duration
	}{
		{name: "zero means the default", seconds: 0, wantLease: 60 * time.Second, wantGrace: 300 * time.Second},
		{name: "negative means the default", seconds: -5, wantLease: 60 * time.Second, wantGrace: 300 * time.Second},
		{name: "explicit value", seconds: 10, wantLease: 10 * time.Second, wantGrace: 50 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := ManagedClusterSpec{LeaseDurationSeconds: tt.seconds}
			if got := spec.LeaseDuration(); got != tt.wantLease {
				t.Errorf("LeaseDuration() = %v, want %v", got, tt.wantLease)
			}
			if got := spec.LeaseGracePeriod(); got != tt.wantGrace {
				t.Errorf("LeaseGracePeriod() = %v, want %v", got, tt.wantGrace)
			}
		})
	}
}

func TestConditionHelpers(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Test"}
	}
	tests := []struct {
		name          string
		conditions    []metav1.Condition
		wantAccepted  bool
		wantJoined    bool
		wantAvailable metav1.ConditionStatus
	}{
		{name: "new cluster", wantAvailable: metav1.ConditionUnknown},
		{
			name:          "accepted, not joined",
			conditions:    []metav1.Condition{cond(ManagedClusterConditionHubAccepted, metav1.ConditionTrue)},
			wantAccepted:  true,
			wantAvailable: metav1.ConditionUnknown,
		},
		{
			name: "joined and available",
			conditions: []metav1.Condition{
				cond(ManagedClusterConditionHubAccepted, metav1.ConditionTrue),
				cond(ManagedClusterConditionJoined, metav1.ConditionTrue),
				cond(ManagedClusterConditionAvailable, metav1.ConditionTrue),
			},
			wantAccepted: true, wantJoined: true, wantAvailable: metav1.ConditionTrue,
		},
		{
			name: "denied and unavailable",
			conditions: []metav1.Condition{
				cond(ManagedClusterConditionHubAccepted, metav1.ConditionFalse),
				cond(ManagedClusterConditionAvailable, metav1.ConditionFalse),
			},
			wantAvailable: metav1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ManagedCluster{Status: ManagedClusterStatus{Conditions: tt.conditions}}
			if got := c.IsAccepted(); got != tt.wantAccepted {
				t.Errorf("IsAccepted() = %v, want %v", got, tt.wantAccepted)
			}
			if got := c.IsJoined(); got != tt.wantJoined {
				t.Errorf("IsJoined() = %v, want %v", got, tt.wantJoined)
			}
			if got := c.AvailableStatus(); got != tt.wantAvailable {
				t.Errorf("AvailableStatus() = %v, want %v", got, tt.wantAvailable)
			}
		})
	}
}

func TestFindTaintAndClaimValue(t *testing.T) {
	c := &ManagedCluster{
		Spec: ManagedClusterSpec{Taints: []Taint{
			{Key: ManagedClusterTaintUnreachable, Effect: TaintEffectNoSelect},
			{Key: "gpu", Value: "none", Effect: TaintEffectPreferNoSelect},
		}},
		Status: ManagedClusterStatus{ClusterClaims: []ManagedClusterClaim{
			{Name: "platform.open-cluster-management.io", Value: "aws"},
		}},
	}
	tests := []struct {
		name       string
		taintKey   string
		wantEffect TaintEffect
		claim      string
		wantValue  string
		wantFound  bool
	}{
		{name: "hub taint and reserved claim", taintKey: ManagedClusterTaintUnreachable, wantEffect: TaintEffectNoSelect,
			claim: "platform.open-cluster-management.io", wantValue: "aws", wantFound: true},
		{name: "user taint, missing claim", taintKey: "gpu", wantEffect: TaintEffectPreferNoSelect, claim: "id.k8s.io"},
		{name: "missing taint", taintKey: ManagedClusterTaintUnavailable, claim: "id.k8s.io"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taint := c.Spec.FindTaint(tt.taintKey)
			switch {
			case tt.wantEffect == "" && taint != nil:
				t.Errorf("FindTaint(%q) = %+v, want nil", tt.taintKey, taint)
			case tt.wantEffect != "" && (taint == nil || taint.Effect != tt.wantEffect):
				t.Errorf("FindTaint(%q) = %+v, want effect %s", tt.taintKey, taint, tt.wantEffect)
			}
			value, found := c.ClaimValue(tt.claim)
			if value != tt.wantValue || found != tt.wantFound {
				t.Errorf("ClaimValue(%q) = %q, %v; want %q, %v", tt.claim, value, found, tt.wantValue, tt.wantFound)
			}
		})
	}
}

func TestManagedNamespaceLabelKey(t *testing.T) {
	tests := []struct{ hash, want string }{
		{"abcd1234", "clusterset.open-cluster-management.io/abcd1234"},
		{"6c5003f4dd1691967bd3047645092380ef15affc718a40bf6cc43496f96e552a",
			"clusterset.open-cluster-management.io/6c5003f4dd1691967bd3047645092380ef15affc718a40bf6cc43496f96e552"},
	}
	for _, tt := range tests {
		if got := ManagedNamespaceLabelKey(tt.hash); got != tt.want {
			t.Errorf("ManagedNamespaceLabelKey(%q) = %q, want %q", tt.hash, got, tt.want)
		}
	}
}
