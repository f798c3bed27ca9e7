package placementcli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/kit"
)

// namespaceUser returns a cli for user alice, who may read the hub's
// ManagedClusters and ManagedClusterSets and the placements, decisions and
// bindings of namespace apps, and nothing else (no AddOnPlacementScores, no
// decisions of other namespaces).
func namespaceUser(ctx context.Context, t *testing.T, env *framework.Environment, c client.Client) clitest.CLI {
	t.Helper()
	read := []string{"get", "list", "watch"}
	kit.MustCreate(ctx, t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "alice-clusters"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters", "managedclustersets"}, Verbs: read}}})
	kit.MustCreate(ctx, t, c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-clusters"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "alice-clusters"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}}})
	kit.MustCreate(ctx, t, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alice-placements"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"},
			Resources: []string{"placements", "placementdecisions", "managedclustersetbindings"}, Verbs: read}}})
	kit.MustCreate(ctx, t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alice-placements"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "alice-placements"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}}})
	cfg, err := env.Cluster("hub").ConfigForUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := framework.WriteKubeconfig(path, "hub", cfg); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "alice's permissions", func(ctx context.Context) (bool, error) {
		ac, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
		if err != nil {
			return false, err
		}
		err = ac.List(ctx, &clusterv1beta1.PlacementList{}, client.InNamespace("apps"))
		return err == nil, err
	})
	return clitest.CLI{Kubeconfig: path}
}

// testNamespaceUser explains placement apps/eu as a user limited to namespace apps.
func testNamespaceUser(ctx context.Context, t *testing.T, env *framework.Environment, c client.Client) {
	k := namespaceUser(ctx, t, env, c)
	r := k.Run(ctx, "placement", "explain", "eu", "-n", "apps")
	clitest.ExpectOK(t, r)
	if got := row(r.Out, "c1"); len(got) < 3 || got[1] != "yes" {
		t.Errorf("row of c1 = %v, want it selected\n%s", got, r.Out)
	}
	for _, w := range []string{"cannot list AddOnPlacementScores", "Balance counts only the placements of namespace apps"} {
		if !strings.Contains(r.ErrOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.ErrOut)
		}
	}
	r = k.Run(ctx, "placement", "get", "-n", "apps")
	clitest.ExpectOK(t, r)
	if row(r.Out, "eu") == nil {
		t.Errorf("placement get lacks eu:\n%s", r.Out)
	}
}
