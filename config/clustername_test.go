package config

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// clusterNames are names to try on every spelling of the cluster-name rule:
// each reserved name and prefix, names that only resemble them, and names
// that break the DNS-1123 label rule.
func clusterNames() []string {
	names := []string{
		// Reserved.
		identity.ReservedClusterName, identity.AgentTokenNamespace, "default", "registration", "work",
		"kube-system", "kube-public", "kube-node-lease", "kube-x", "kube-1",
		"open-cluster-management", "open-cluster-management-hub", "open-cluster-management-agent",
		"open-cluster-management-addon", "open-cluster-managementx", "open-cluster-management1",
		// Near them, and allowed.
		"kube", "kubex", "kubesystem", "x-kube-system", "defaults", "default1", "xdefault",
		"registrations", "works", "work1", "xwork", "managed-cluster", "managed-clusters1",
		"open-cluster-managemen", "open-cluster", "ocm", "open-cluster-management-agent-token",
		"cluster1", "local-cluster", "a", "1", "0a", strings.Repeat("a", 63),
		// Not DNS-1123 labels.
		strings.Repeat("a", 64), "kube-" + strings.Repeat("a", 59), "Cluster1", "KUBE-SYSTEM", "-a", "a-", "kube-",
		"a.b", "a_b", "a b", "cluster1.example.com",
	}
	return names
}

// celRules compiles the x-kubernetes-validations rules of a CRD schema;
// self is the value they validate.
func celRules(t *testing.T, where string, rules apiextensionsv1.ValidationRules) []func(self any) bool {
	t.Helper()
	require.NotEmpty(t, rules, "%s has no x-kubernetes-validations rules", where)
	// The API server's CRD validation CEL has the strings extension.
	env, err := cel.NewEnv(cel.Variable("self", cel.DynType), ext.Strings(ext.StringsVersion(2)))
	require.NoError(t, err)
	var out []func(any) bool
	for _, r := range rules {
		ast, iss := env.Compile(r.Rule)
		require.NoError(t, iss.Err(), "compile %s rule %s", where, r.Rule)
		prg, err := env.Program(ast)
		require.NoError(t, err)
		out = append(out, func(self any) bool {
			v, _, err := prg.Eval(map[string]any{"self": self})
			require.NoError(t, err, "evaluate %s rule %s on %v", where, r.Rule, self)
			return v.Value().(bool)
		})
	}
	return out
}

// TestClusterNameRulesAgree keeps the CRDs' spelling of which names a
// managed cluster may take equal to identity.ValidateClusterName, which the
// CLI, the Klusterlet operator and the agent call: the ManagedCluster's
// CEL rules on metadata.name, and the Klusterlet's pattern, maxLength and
// CEL rules on spec.clusterName, which refuse a Klusterlet from Helm or
// GitOps that the hub would refuse.
func TestClusterNameRulesAgree(t *testing.T) {
	mcl, err := CRD("managedclusters.cluster.open-cluster-management.io")
	require.NoError(t, err)
	kl, err := CRD(KlusterletsCRDName)
	require.NoError(t, err)
	type check struct {
		name  string
		valid func(string) bool
	}
	var checks []check
	for _, v := range mcl.Spec.Versions {
		where := "ManagedCluster " + v.Name
		rules := celRules(t, where, v.Schema.OpenAPIV3Schema.XValidations)
		checks = append(checks, check{where + " metadata.name", func(n string) bool {
			self := map[string]any{"metadata": map[string]any{"name": n}}
			for _, ok := range rules {
				if !ok(self) {
					return false
				}
			}
			return true
		}})
	}
	for _, v := range kl.Spec.Versions {
		where := "Klusterlet " + v.Name + " spec.clusterName"
		field := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["clusterName"]
		require.NotNil(t, field.MaxLength, "%s has no maxLength", where)
		pattern := regexp.MustCompile(field.Pattern)
		rules := celRules(t, where, field.XValidations)
		checks = append(checks, check{where, func(n string) bool {
			if int64(len(n)) > *field.MaxLength || !pattern.MatchString(n) {
				return false
			}
			for _, ok := range rules {
				if !ok(n) {
					return false
				}
			}
			return true
		}})
	}
	for _, n := range clusterNames() {
		goErr := identity.ValidateClusterName(n)
		for _, c := range checks {
			if got := c.valid(n); got != (goErr == nil) {
				t.Errorf("%s accepts %q: %v, but identity.ValidateClusterName says %v: make the markers in pkg/apis and the Go rule agree", c.name, n, got, goErr)
			}
		}
	}
}
