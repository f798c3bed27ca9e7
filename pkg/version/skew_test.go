package version

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

func TestRelease(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"v0.7.1", true},
		{"0.7.1", true},
		{"v1.2.0-rc.1", true},
		{"v0.7.1-3-gabc1234-dirty", true},
		{"v0.0.0-dev", false},
		{"v0.0.0", false},
		{"cf34dfa", false},
		{"v0.7", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, got := Release(tt.v); got != tt.want {
			t.Errorf("Release(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	agent := func(hub, v string) Judgement { return CheckAgent(hub, v) }
	plugin := func(hub, v string) Judgement { return CheckClient(v, hub) }
	tests := []struct {
		name   string
		check  func(hub, v string) Judgement
		hub, v string
		want   Verdict
		reason string
	}{
		{"agent: same version", agent, "v0.7.1", "v0.7.1", Supported, ""},
		{"agent: older patch", agent, "v0.7.1", "v0.7.0", Supported, ""},
		{"agent: newer patch", agent, "v0.7.1", "v0.7.3", Supported, ""},
		{"agent: two minors older", agent, "v0.7.1", "v0.5.9", Supported, ""},
		{"agent: three minors older", agent, "v0.7.1", "v0.4.0", Unsupported, "3 minor versions older than the hub controller v0.7.1 (the policy allows 2)"},
		{"agent: one minor newer", agent, "v0.7.1", "v0.8.0", Unsupported, "newer than the hub controller v0.7.1"},
		{"agent: older major", agent, "v1.1.0", "v0.9.0", Unsupported, "another major version"},
		{"agent: newer major", agent, "v1.1.0", "v2.0.0", Unsupported, "another major version"},
		{"agent: git describe of a release", agent, "v0.7.1-4-gabc1234", "v0.7.0", Supported, ""},
		{"agent: development agent", agent, "v0.7.1", "v0.0.0-dev", NotJudged, "the agent v0.0.0-dev is a development build"},
		{"agent: development hub", agent, "cf34dfa", "v0.7.1", NotJudged, "the hub controller cf34dfa is a development build"},
		{"agent: reports nothing", agent, "v0.7.1", "", NotJudged, "the agent reports no version"},
		{"agent: hub reports nothing", agent, "", "v0.7.1", NotJudged, "the hub controller reports no version"},
		{"plugin: same minor", plugin, "v0.7.1", "v0.7.0", Supported, ""},
		{"plugin: one minor older", plugin, "v0.7.1", "v0.6.2", Supported, ""},
		{"plugin: one minor newer", plugin, "v0.7.1", "v0.8.0", Supported, ""},
		{"plugin: two minors older", plugin, "v0.7.1", "v0.5.0", Unsupported, "2 minor versions older than the hub controller v0.7.1 (the policy allows 1)"},
		{"plugin: two minors newer", plugin, "v0.7.1", "v0.9.0", Unsupported, "2 minor versions newer than the hub controller v0.7.1 (the policy allows 1)"},
		{"plugin: another major", plugin, "v0.9.0", "v1.0.0", Unsupported, "another major version"},
		{"plugin: development plugin", plugin, "v0.7.1", "v0.0.0-dev", NotJudged, "the kubectl-ocm v0.0.0-dev is a development build"},
		{"plugin: development hub", plugin, "v0.0.0-dev", "v0.7.1", NotJudged, "the hub controller v0.0.0-dev is a development build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.check(tt.hub, tt.v)
			if got.Verdict != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("hub %q, %q: %+v, want %s with a reason containing %q", tt.hub, tt.v, got, tt.want, tt.reason)
			}
		})
	}
}

func TestReportedVersions(t *testing.T) {
	mc := &clusterv1.ManagedCluster{Status: clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{
		{Name: "id.k8s.io", Value: "abc"}, AgentClaim("v0.7.1"),
	}}}
	if got := AgentVersion(mc); got != "v0.7.1" {
		t.Errorf("AgentVersion = %q, want v0.7.1", got)
	}
	if got := AgentVersion(&clusterv1.ManagedCluster{}); got != "" {
		t.Errorf("AgentVersion of a cluster without the claim = %q, want empty", got)
	}
	cm := &operatorv1.ClusterManager{Status: operatorv1.ClusterManagerStatus{Conditions: []metav1.Condition{
		{Type: operatorv1.ConditionClusterManagerApplied, Status: metav1.ConditionTrue, Message: "applied"},
		HubControllerCondition("v0.7.2", 3),
	}}}
	if got := HubControllerVersion(cm); got != "v0.7.2" {
		t.Errorf("HubControllerVersion = %q, want v0.7.2", got)
	}
	if got := HubControllerVersion(&operatorv1.ClusterManager{}); got != "" {
		t.Errorf("HubControllerVersion of a ClusterManager without the condition = %q, want empty", got)
	}
}
