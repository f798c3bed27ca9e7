package csr

import (
	"fmt"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// userInfo is who made a request, as the API server presents it to
// admission: the certificate's common name and organizations, or a token's
// user and groups.
type userInfo struct {
	user   string
	groups []string
}

// celRule compiles one of the identity package's admission rules.
func celRule(t *testing.T, expr string) func(userInfo) bool {
	t.Helper()
	// Kubernetes' admission CEL has the strings extension (substring, ...).
	env, err := cel.NewEnv(cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)), cel.OptionalTypes(), ext.Strings(ext.StringsVersion(2)))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("compile %s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	return func(u userInfo) bool {
		groups := append([]string{}, u.groups...)
		out, _, err := prg.Eval(map[string]any{"request": map[string]any{"namespace": "cluster1", "userInfo": map[string]any{"username": u.user, "groups": groups}}})
		if err != nil {
			t.Fatalf("evaluate %s for %+v: %v", expr, u, err)
		}
		return out.Value().(bool)
	}
}

// subsets returns every subset of pool, in a fixed order.
func subsets(pool []string) [][]string {
	out := make([][]string, 0, 1<<len(pool))
	for mask := range 1 << len(pool) {
		var s []string
		for i, g := range pool {
			if mask&(1<<i) != 0 {
				s = append(s, g)
			}
		}
		out = append(out, s)
	}
	return out
}

// TestAdmissionRulesMatchEveryApprovableSubject enumerates certificate
// subjects (common names that are, or resemble, the registration protocol's
// names, with every combination of organizations from a pool of its groups
// and others), and checks that every subject the approval policy would sign,
// for a cluster agent or an add-on agent, is an identity that the admission
// policies' rule (identity.ClusterIdentityCEL) matches; and that the CEL and
// Go forms of each identity rule agree on every subject, signed or not.
func TestAdmissionRulesMatchEveryApprovableSubject(t *testing.T) {
	clusterCEL := celRule(t, identity.ClusterIdentityCEL)
	bootstrapCEL := celRule(t, identity.BootstrapIdentityCEL)
	// Requests in namespace cluster1 (celRule).
	agentOfCEL := celRule(t, identity.AgentOfCEL("request.namespace"))

	names := []string{
		agent1, agent2, identity.ClusterGroup("cluster1"), identity.ManagedClustersGroup, identity.AgentUserName("cluster1", ""),
		identity.AgentUserName("cluster1", "a:b"),
		identity.AddonUserName("cluster1", "helloworld", "agent1"), identity.AddonUserName("cluster1", "helloworld", ""),
		"system:open-cluster-management", "evil", "", "system:admin", bootstrap, bound1,
		identity.AgentTokenUserName("cluster1"), identity.BootstrapTokenUserPrefix + "abcdef",
	}
	pool := []string{
		identity.ClusterGroup("cluster1"), identity.ManagedClustersGroup, identity.ClusterGroup("cluster2"),
		identity.AddonClusterGroup("cluster1", "helloworld"), identity.AddonGroup("helloworld"),
		identity.AuthenticatedGroup, identity.BootstrapTokenGroup, "system:masters",
	}
	agentSigned, addonSigned := 0, 0
	for _, cn := range names {
		for _, orgs := range subsets(pool) {
			who := userInfo{user: cn, groups: append(append([]string{}, orgs...), identity.AuthenticatedGroup)}
			if got, want := clusterCEL(who), identity.IsClusterIdentity(who.user, who.groups); got != want {
				t.Errorf("ClusterIdentityCEL(%+v) = %v, IsClusterIdentity = %v", who, got, want)
			}
			if got, want := bootstrapCEL(who), identity.IsBootstrapIdentity(who.user, who.groups); got != want {
				t.Errorf("BootstrapIdentityCEL(%+v) = %v, IsBootstrapIdentity = %v", who, got, want)
			}
			if got, want := agentOfCEL(who), identity.IsAgentOf(who.user, who.groups, "cluster1"); got != want {
				t.Errorf("AgentOfCEL(%+v) in cluster1 = %v, IsAgentOf = %v", who, got, want)
			}

			agentReq := with(request("cluster1", "cluster1", bootstrap), func(r *Request) { r.CommonName, r.Organizations = cn, orgs })
			addonReq := with(agentReq, func(r *Request) { r.Addon = "helloworld" })
			for _, signer := range []string{certificatesv1.KubeAPIServerClientSignerName} {
				agentReq.SignerName, addonReq.SignerName = signer, signer
				signed := ""
				if Validate(agentReq) == nil {
					signed, agentSigned = "a cluster agent's", agentSigned+1
				}
				if ValidateAddon(addonReq) == nil {
					signed, addonSigned = "an add-on agent's", addonSigned+1
				}
				if signed != "" && !clusterCEL(who) {
					t.Errorf("the policy signs %s certificate %+v, which the agent admission policies do not match", signed, who)
				}
				if signed == "a cluster agent's" && !agentOfCEL(who) {
					t.Errorf("the policy signs cluster1's agent certificate %+v, which the lease policy does not take for cluster1's agent", who)
				}
			}
		}
	}
	// The enumeration reaches what the policy signs: the agent's one
	// subject form, and the add-on agent's name with each subset of its
	// groups.
	if agentSigned != 1 {
		t.Errorf("the policy signs %d cluster agent subjects of the enumeration, want exactly 1 (CN %s, O %v)", agentSigned, agent1, identity.AgentGroups("cluster1"))
	}
	// Three of the pool's groups are the add-on's default groups.
	if want := 1 << 3; addonSigned != want {
		t.Errorf("the policy signs %d add-on subjects of the enumeration, want %d (one name, each subset of its groups)", addonSigned, want)
	}
}

// TestAdmissionRulesKnownIdentities pins the rule's answer for the product's
// own identities, so that a change to the prefixes shows here.
func TestAdmissionRulesKnownIdentities(t *testing.T) {
	clusterCEL := celRule(t, identity.ClusterIdentityCEL)
	bootstrapCEL := celRule(t, identity.BootstrapIdentityCEL)
	sa := func(ns, name string) userInfo {
		return userInfo{user: identity.ServiceAccountUserName(ns, name), groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, identity.AuthenticatedGroup}}
	}
	for _, tt := range []struct {
		who       userInfo
		cluster   bool
		bootstrap bool
	}{
		{userInfo{agent1, identity.AgentGroups("cluster1")}, true, false},
		{userInfo{agent1, nil}, true, false},
		{userInfo{"evil", []string{identity.ClusterGroup("cluster1")}}, true, false},
		{sa(identity.AgentTokenNamespace, "cluster1"), true, false},
		{userInfo{identity.AddonUserName("cluster1", "a", "agent"), nil}, true, false},
		{sa(identity.BootstrapNamespace, identity.BootstrapServiceAccount), false, true},
		{sa(identity.ClusterBootstrapNamespace, identity.ClusterBootstrapServiceAccount("cluster1")), false, true},
		// Every ServiceAccount of the cluster-bound namespace holds the
		// bootstrap role, its default one too.
		{sa(identity.ClusterBootstrapNamespace, "default"), false, true},
		// An earlier release's cluster-bound ServiceAccount: the upgrade
		// deletes it and its binding.
		{sa(identity.BootstrapNamespace, identity.ClusterBootstrapServiceAccount("cluster1")), false, false},
		{userInfo{identity.BootstrapTokenUserPrefix + "abcdef", []string{identity.BootstrapTokenGroup}}, false, true},
		{userInfo{"someone", []string{identity.BootstrapTokenGroup}}, false, true},
		// The hub controller, an add-on's token identity and an administrator.
		{sa("open-cluster-management-hub", "ocm-controller"), false, false},
		{sa("cluster1", identity.AddonServiceAccount("a")), false, false},
		{userInfo{"admin", []string{"system:masters"}}, false, false},
	} {
		t.Run(fmt.Sprintf("%s %v", tt.who.user, tt.who.groups), func(t *testing.T) {
			if got := identity.IsClusterIdentity(tt.who.user, tt.who.groups); got != tt.cluster || clusterCEL(tt.who) != got {
				t.Errorf("cluster identity: Go %v, CEL %v, want %v", got, clusterCEL(tt.who), tt.cluster)
			}
			if got := identity.IsBootstrapIdentity(tt.who.user, tt.who.groups); got != tt.bootstrap || bootstrapCEL(tt.who) != got {
				t.Errorf("bootstrap identity: Go %v, CEL %v, want %v", got, bootstrapCEL(tt.who), tt.bootstrap)
			}
		})
	}
}
