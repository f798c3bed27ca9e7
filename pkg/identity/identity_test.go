package identity

import "testing"

func TestParseAgentUserName(t *testing.T) {
	tests := []struct {
		user           string
		cluster, agent string
		ok             bool
	}{
		{"system:open-cluster-management:c1:abc", "c1", "abc", true},
		{AgentUserName("cluster-a", "x1"), "cluster-a", "x1", true},
		{"system:open-cluster-management:c1", "", "", false},
		{"system:open-cluster-management:c1:", "", "", false},
		{"system:open-cluster-management:c1:a:b", "", "", false},
		{"system:open-cluster-management:C_1:a", "", "", false},
		{ManagedClustersGroup, "", "", false},
		{"alice", "", "", false},
	}
	for _, tt := range tests {
		cluster, agent, ok := ParseAgentUserName(tt.user)
		if cluster != tt.cluster || agent != tt.agent || ok != tt.ok {
			t.Errorf("ParseAgentUserName(%q) = %q, %q, %v; want %q, %q, %v", tt.user, cluster, agent, ok, tt.cluster, tt.agent, tt.ok)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		user string
		want Requester
	}{
		{"system:serviceaccount:open-cluster-management:agent-registration-bootstrap", Requester{Kind: SharedBootstrap}},
		{"system:bootstrap:abcdef", Requester{Kind: SharedBootstrap}},
		{"system:bootstrap:", Requester{}},
		{"system:serviceaccount:open-cluster-management:agent-registration-bootstrap-c1", Requester{Kind: ClusterBootstrap, Cluster: "c1"}},
		{ClusterBootstrapUser("cluster-2"), Requester{Kind: ClusterBootstrap, Cluster: "cluster-2"}},
		{"system:serviceaccount:open-cluster-management:agent-registration-bootstrap-", Requester{}},
		{"system:serviceaccount:other:agent-registration-bootstrap-c1", Requester{}},
		{"system:open-cluster-management:c1:agent", Requester{Kind: Agent, Cluster: "c1"}},
		{"alice", Requester{}},
	}
	for _, tt := range tests {
		if got := Classify(tt.user); got != tt.want {
			t.Errorf("Classify(%q) = %+v, want %+v", tt.user, got, tt.want)
		}
	}
}
