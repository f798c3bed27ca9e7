package placementcli

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// namespaceUser returns a cli for user alice, who may read the hub's
// ManagedClusters and ManagedClusterSets and the placements, decisions and
// bindings of namespace apps, and nothing else (no AddOnPlacementScores, no
// decisions of other namespaces).
func namespaceUser(ctx context.Context, t *testing.T, env *framework.Environment) clitest.CLI {
	t.Helper()
	read := []string{"get", "list", "watch"}
	return clitest.AsUser(ctx, t, env.Cluster("hub"), clitest.User{Name: "alice", Grants: []clitest.Grant{
		{Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters", "managedclustersets"}, Verbs: read}}},
		{Namespace: "apps", Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"},
			Resources: []string{"placements", "placementdecisions", "managedclustersetbindings"}, Verbs: read}}},
	}})
}

// testNamespaceUser explains placement apps/eu as a user limited to namespace apps.
func testNamespaceUser(ctx context.Context, t *testing.T, env *framework.Environment, c client.Client) {
	k := namespaceUser(ctx, t, env)
	r := k.Run(ctx, "placement", "explain", "eu", "-n", "apps")
	clitest.ExpectOK(t, r)
	if got := clitest.Row(r.Out, "c1"); len(got) < 3 || got[1] != "yes" {
		t.Errorf("row of c1 = %v, want it selected\n%s", got, r.Out)
	}
	for _, w := range []string{"cannot list AddOnPlacementScores", "Balance counts only the placements of namespace apps"} {
		if !strings.Contains(r.ErrOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.ErrOut)
		}
	}
	r = k.Run(ctx, "placement", "get", "-n", "apps")
	clitest.ExpectOK(t, r)
	if clitest.Row(r.Out, "eu") == nil {
		t.Errorf("placement get lacks eu:\n%s", r.Out)
	}
}
