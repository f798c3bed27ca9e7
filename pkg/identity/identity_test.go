package identity

import (
	"strings"
	"testing"
)

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
		{AgentTokenUserName("c1"), Requester{Kind: Agent, Cluster: "c1"}},
		{"system:serviceaccount:c1:klusterlet", Requester{Kind: Agent, Cluster: "c1"}},
		{"system:serviceaccount:C_1:klusterlet", Requester{}},
		{"system:serviceaccount::klusterlet", Requester{}},
		{"system:serviceaccount:c1:klusterlet-agent", Requester{}},
		{AddonTokenUserName("c1", "klusterlet"), Requester{}},
		{"alice", Requester{}},
	}
	for _, tt := range tests {
		if got := Classify(tt.user); got != tt.want {
			t.Errorf("Classify(%q) = %+v, want %+v", tt.user, got, tt.want)
		}
	}
}

func TestAddonIdentity(t *testing.T) {
	if got, want := AddonUserName("c1", "helloworld", "helloworld"), "system:open-cluster-management:cluster:c1:addon:helloworld:agent:helloworld"; got != want {
		t.Errorf("AddonUserName = %q, want %q", got, want)
	}
	groups := AddonDefaultGroups("c1", "helloworld")
	want := []string{"system:open-cluster-management:cluster:c1:addon:helloworld", "system:open-cluster-management:addon:helloworld", "system:authenticated"}
	for i := range want {
		if groups[i] != want[i] {
			t.Errorf("AddonDefaultGroups[%d] = %q, want %q", i, groups[i], want[i])
		}
	}
	// An add-on agent is not a cluster agent and not a bootstrap identity.
	if r := Classify(AddonUserName("c1", "helloworld", "helloworld")); r.Kind != Other {
		t.Errorf("Classify(add-on user) = %+v, want Other", r)
	}
}

// TestAgentSubjects checks that the grants to a cluster's agent name its
// certificate group and its token ServiceAccount, which Classify both
// takes for that cluster's agent.
func TestAgentSubjects(t *testing.T) {
	var groups, accounts []string
	for _, s := range AgentSubjects("c1") {
		switch s.Kind {
		case "Group":
			groups = append(groups, s.Name)
		case "ServiceAccount":
			accounts = append(accounts, ServiceAccountUserName(s.Namespace, s.Name))
		default:
			t.Errorf("unexpected subject %+v", s)
		}
	}
	if len(groups) != 2 || groups[0] != ClusterGroup("c1") || groups[1] != "open-cluster-management:c1" {
		t.Errorf("groups %v", groups)
	}
	if len(accounts) != 1 || accounts[0] != AgentTokenUserName("c1") {
		t.Errorf("ServiceAccounts %v, want %s", accounts, AgentTokenUserName("c1"))
	}
	for _, user := range append(accounts, AgentUserName("c1", "x")) {
		if r := Classify(user); r.Kind != Agent || r.Cluster != "c1" {
			t.Errorf("Classify(%q) = %+v, want the agent of c1", user, r)
		}
	}
}

func TestValidateClusterName(t *testing.T) {
	for name, want := range map[string]string{
		"cluster1":          "",
		"managed-clusters":  "reserved",
		"Cluster_1":         "not a DNS-1123 label",
		"a.b":               "not a DNS-1123 label",
		"managed-clusters2": "",
	} {
		err := ValidateClusterName(name)
		switch {
		case want == "" && err != nil:
			t.Errorf("ValidateClusterName(%q) = %v, want nil", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ValidateClusterName(%q) = %v, want an error saying %q", name, err, want)
		}
	}
	if ClusterGroup(ReservedClusterName) != ManagedClustersGroup {
		t.Errorf("the reserved name's group %s is not %s: the reservation no longer guards anything", ClusterGroup(ReservedClusterName), ManagedClustersGroup)
	}
}
