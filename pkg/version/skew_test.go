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

func TestCheckAgent(t *testing.T) {
	tests := []struct {
		name, hub, agent string
		want             Verdict
		reason           string
	}{
		{"same version", "v0.7.1", "v0.7.1", Supported, ""},
		{"older patch", "v0.7.1", "v0.7.0", Supported, ""},
		{"newer patch", "v0.7.1", "v0.7.3", Supported, ""},
		{"two minors older", "v0.7.1", "v0.5.9", Supported, ""},
		{"three minors older", "v0.7.1", "v0.4.0", Unsupported, "3 minor versions older than the hub controller v0.7.1"},
		{"one minor newer", "v0.7.1", "v0.8.0", Unsupported, "newer than the hub controller v0.7.1"},
		{"older major", "v1.1.0", "v0.9.0", Unsupported, "another major version"},
		{"newer major", "v1.1.0", "v2.0.0", Unsupported, "another major version"},
		{"git describe of a release", "v0.7.1-4-gabc1234", "v0.7.0", Supported, ""},
		{"development agent", "v0.7.1", "v0.0.0-dev", NotJudged, "the agent v0.0.0-dev is a development build"},
		{"development hub", "cf34dfa", "v0.7.1", NotJudged, "the hub controller cf34dfa is a development build"},
		{"agent reports nothing", "v0.7.1", "", NotJudged, "the agent reports no version"},
		{"hub reports nothing", "", "v0.7.1", NotJudged, "the hub controller reports no version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckAgent(tt.hub, tt.agent)
			if got.Verdict != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("CheckAgent(%q, %q) = %+v, want %s with a reason containing %q", tt.hub, tt.agent, got, tt.want, tt.reason)
			}
		})
	}
}

func TestCheckClient(t *testing.T) {
	tests := []struct {
		name, client, hub string
		want              Verdict
		reason            string
	}{
		{"same minor", "v0.7.0", "v0.7.1", Supported, ""},
		{"one minor older", "v0.6.2", "v0.7.1", Supported, ""},
		{"one minor newer", "v0.8.0", "v0.7.1", Supported, ""},
		{"two minors older", "v0.5.0", "v0.7.1", Unsupported, "2 minor versions older than the hub controller v0.7.1"},
		{"two minors newer", "v0.9.0", "v0.7.1", Unsupported, "2 minor versions newer than the hub controller v0.7.1"},
		{"another major", "v1.0.0", "v0.9.0", Unsupported, "another major version"},
		{"development plugin", "v0.0.0-dev", "v0.7.1", NotJudged, "the kubectl-ocm v0.0.0-dev is a development build"},
		{"development hub", "v0.7.1", "v0.0.0-dev", NotJudged, "development build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckClient(tt.client, tt.hub)
			if got.Verdict != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("CheckClient(%q, %q) = %+v, want %s with a reason containing %q", tt.client, tt.hub, got, tt.want, tt.reason)
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
