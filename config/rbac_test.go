package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// TestBindingsReferToRenderedRoles checks, for custom namespaces, that every
// rendered binding refers to a role rendered with it (in its namespace for a
// Role) and to a ServiceAccount rendered with it, and that every Role lives in
// a rendered namespace (or kube-system): the roles generated from RBAC markers name the
// namespace only through the values.
func TestBindingsReferToRenderedRoles(t *testing.T) {
	hosting, _, err := HostedAgentObjects(AgentValues{ClusterName: "c2", AgentNamespace: "hosted-x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		objs func() ([]*unstructured.Unstructured, error)
	}{
		{"hub", func() ([]*unstructured.Unstructured, error) { return HubObjects(HubValues{HubNamespace: "hub-x"}) }},
		{"agent", func() ([]*unstructured.Unstructured, error) {
			return AgentObjects(AgentValues{ClusterName: "c1", AgentNamespace: "agent-x"})
		}},
		{"hosted agent", func() ([]*unstructured.Unstructured, error) { return hosting, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := tt.objs()
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, o := range objs {
				have[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = true
			}
			for _, o := range objs {
				switch o.GetKind() {
				case "Role":
					// kube-system and kube-public exist in every cluster.
					if o.GetNamespace() != "kube-system" && o.GetNamespace() != "kube-public" && !have["Namespace /"+o.GetNamespace()] {
						t.Errorf("Role %s is in namespace %q, which is not rendered", o.GetName(), o.GetNamespace())
					}
				case "RoleBinding", "ClusterRoleBinding":
					checkBinding(t, o, have)
				}
			}
		})
	}
}

// checkBinding reports a binding whose role or ServiceAccount is not in have.
func checkBinding(t *testing.T, binding *unstructured.Unstructured, have map[string]bool) {
	t.Helper()
	kind, _, _ := unstructured.NestedString(binding.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(binding.Object, "roleRef", "name")
	ns := ""
	if kind == "Role" {
		ns = binding.GetNamespace()
	}
	if !have[kind+" "+ns+"/"+name] {
		t.Errorf("%s %s refers to %s %s/%s, which is not rendered", binding.GetKind(), binding.GetName(), kind, ns, name)
	}
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	for _, s := range subjects {
		subject, _ := s.(map[string]any)
		if subject["kind"] != "ServiceAccount" {
			continue
		}
		if key := "ServiceAccount " + subject["namespace"].(string) + "/" + subject["name"].(string); !have[key] {
			t.Errorf("%s %s binds %s, which is not rendered", binding.GetKind(), binding.GetName(), key)
		}
	}
}

// TestHubTunnelRBACFollowsTheGate: the agent may impersonate hub users only
// while the Klusterlet leaves the HubTunnel gate on.
func TestHubTunnelRBACFollowsTheGate(t *testing.T) {
	for gates, want := range map[string]bool{"": true, "HubTunnel=true": true, "HubTunnel=false": false} {
		objs, err := AgentObjects(AgentValues{ClusterName: "c1", FeatureGates: gates})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range objs {
			if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "open-cluster-management:klusterlet-agent:hub-tunnel" {
				found = true
			}
		}
		if found != want {
			t.Errorf("--feature-gates=%q: the hub tunnel's impersonation is bound: %v, want %v", gates, found, want)
		}
	}
}

// TestAgentsBindingNamesEveryAgent: the agents' shared ClusterRoleBinding
// binds exactly the subjects identity.AllAgentsSubjects names, and its
// ClusterRole grants nothing that is not held to each agent's own cluster
// elsewhere but the reading of ManagedClusters (docs/design/authorization.md).
func TestAgentsBindingNamesEveryAgent(t *testing.T) {
	objs, err := HubObjects(HubValues{})
	require.NoError(t, err)
	var binding rbacv1.ClusterRoleBinding
	var role rbacv1.ClusterRole
	for _, o := range objs {
		if o.GetName() != "open-cluster-management:managed-clusters" {
			continue
		}
		switch o.GetKind() {
		case "ClusterRoleBinding":
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &binding))
		case "ClusterRole":
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role))
		}
	}
	assert.Equal(t, identity.AllAgentsSubjects(), binding.Subjects)
	assert.Equal(t, "open-cluster-management:managed-clusters", binding.RoleRef.Name)
	var got []string
	for _, r := range role.Rules {
		assert.Empty(t, r.ResourceNames, "rule %v", r)
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				got = append(got, v+" "+res)
			}
		}
	}
	assert.ElementsMatch(t, []string{
		"create certificatesigningrequests",
		"renew managedclusters/clientcertificates",
		"get managedclusters", "list managedclusters", "watch managedclusters",
		"patch managedclusters/status", "update managedclusters/status",
		"get managedclusters/attach", "get managedclusters/chunks",
	}, got)
}
