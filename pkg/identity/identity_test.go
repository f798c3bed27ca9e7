package identity

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
		{"system:serviceaccount:open-cluster-management-cluster-bootstrap:agent-registration-bootstrap-c1", Requester{Kind: ClusterBootstrap, Cluster: "c1"}},
		{ClusterBootstrapUser("cluster-2"), Requester{Kind: ClusterBootstrap, Cluster: "cluster-2"}},
		{"system:serviceaccount:open-cluster-management-cluster-bootstrap:agent-registration-bootstrap-", Requester{}},
		{"system:serviceaccount:open-cluster-management-cluster-bootstrap:agent-registration-bootstrap-C1", Requester{}},
		// The namespace's other ServiceAccounts are bound to no cluster.
		{"system:serviceaccount:open-cluster-management-cluster-bootstrap:default", Requester{}},
		{"system:serviceaccount:open-cluster-management-cluster-bootstrap:c1", Requester{}},
		// An earlier release's cluster-bound ServiceAccount, in the shared
		// bootstrap namespace, is no bootstrap identity any more: the hub
		// deletes it when it upgrades.
		{"system:serviceaccount:open-cluster-management:agent-registration-bootstrap-c1", Requester{}},
		{"system:serviceaccount:other:agent-registration-bootstrap-c1", Requester{}},
		{"system:open-cluster-management:c1:agent", Requester{Kind: Agent, Cluster: "c1"}},
		{AgentTokenUserName("c1"), Requester{Kind: Agent, Cluster: "c1"}},
		{"system:serviceaccount:open-cluster-management-agent-tokens:c1", Requester{Kind: Agent, Cluster: "c1"}},
		{"system:serviceaccount:open-cluster-management-agent-tokens:C_1", Requester{}},
		{"system:serviceaccount:open-cluster-management-agent-tokens:", Requester{}},
		{"system:serviceaccount:open-cluster-management-agent-tokens:c1:x", Requester{}},
		{"system:serviceaccount:open-cluster-management-agent-tokens-x:c1", Requester{}},
		// M6: no ServiceAccount of a cluster namespace is an agent identity,
		// whatever its name: the namespace's editors impersonate them and
		// request their tokens.
		{"system:serviceaccount:c1:klusterlet", Requester{}},
		{ServiceAccountUserName("c1", LegacyAgentServiceAccount), Requester{}},
		{"system:serviceaccount:c1:c1", Requester{}},
		{"system:serviceaccount:c1:klusterlet-agent", Requester{}},
		{AddonTokenUserName("c1", "klusterlet"), Requester{}},
		// L8: the group-like name without the system: prefix is nobody.
		{"open-cluster-management:c1", Requester{}},
		{"open-cluster-management:c1:agent", Requester{}},
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
// certificate group and, for a token-driver cluster only, its token
// ServiceAccount in the hub-administered namespace, which Classify both
// takes for that cluster's agent; and nothing else: no ServiceAccount of the
// cluster namespace (M6), no group without the system: prefix (L8).
func TestAgentSubjects(t *testing.T) {
	for _, tokenDriver := range []bool{false, true} {
		var groups, accounts []string
		for _, s := range AgentSubjects("c1", tokenDriver) {
			switch s.Kind {
			case "Group":
				groups = append(groups, s.Name)
			case "ServiceAccount":
				if s.Namespace != AgentTokenNamespace {
					t.Errorf("token driver %v: ServiceAccount subject %s/%s is outside %s", tokenDriver, s.Namespace, s.Name, AgentTokenNamespace)
				}
				accounts = append(accounts, ServiceAccountUserName(s.Namespace, s.Name))
			default:
				t.Errorf("unexpected subject %+v", s)
			}
		}
		if len(groups) != 1 || groups[0] != ClusterGroup("c1") {
			t.Errorf("token driver %v: groups %v, want only %s", tokenDriver, groups, ClusterGroup("c1"))
		}
		wantAccounts := 0
		if tokenDriver {
			wantAccounts = 1
		}
		if len(accounts) != wantAccounts || (tokenDriver && accounts[0] != AgentTokenUserName("c1")) {
			t.Errorf("token driver %v: ServiceAccounts %v, want %d (%s)", tokenDriver, accounts, wantAccounts, AgentTokenUserName("c1"))
		}
		for _, user := range append(accounts, AgentUserName("c1", "x")) {
			if r := Classify(user); r.Kind != Agent || r.Cluster != "c1" {
				t.Errorf("Classify(%q) = %+v, want the agent of c1", user, r)
			}
		}
	}
}

func TestValidateClusterName(t *testing.T) {
	for name, want := range map[string]string{
		"cluster1":                             "",
		"managed-clusters":                     "reserved",
		"Cluster_1":                            "not a DNS-1123 label",
		"a.b":                                  "not a DNS-1123 label",
		"managed-clusters2":                    "",
		"open-cluster-management-agent-tokens": "reserved",
		"open-cluster-management-hub":          "the hub's own namespaces",
		"kube-system":                          "the hub's own namespaces",
		"kube-public":                          "the hub's own namespaces",
		"default":                              "the hub's own namespaces",
		"registration":                         "shared agent role",
		"work":                                 "shared agent role",
		"kubernetes":                           "",
		"work1":                                "",
		"local-cluster":                        "",
	} {
		err := ValidateClusterName(name)
		if want == "" {
			assert.NoError(t, err, "ValidateClusterName(%q)", name)
		} else {
			assert.ErrorContains(t, err, want, "ValidateClusterName(%q)", name)
		}
	}
	if ClusterGroup(ReservedClusterName) != ManagedClustersGroup {
		t.Errorf("the reserved name's group %s is not %s: the reservation no longer guards anything", ClusterGroup(ReservedClusterName), ManagedClustersGroup)
	}
}
