package placementcli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/clusterset"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// managedNamespaces returns the names of the managed namespaces of set name.
func managedNamespaces(ctx context.Context, t *testing.T, c client.Client, name string) string {
	t.Helper()
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range set.Spec.ManagedNamespaces {
		names = append(names, m.Name)
	}
	return strings.Join(names, ",")
}

// snapshot names every ManagedCluster, ManagedClusterSet and
// ManagedClusterSetBinding with its resourceVersion: equal snapshots mean
// that none of them changed.
func snapshot(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var out []string
	clusters := &clusterv1.ManagedClusterList{}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	for _, l := range []client.ObjectList{clusters, sets, bindings} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range clusters.Items {
		out = append(out, "ManagedCluster "+o.Name+"@"+o.ResourceVersion)
	}
	for _, o := range sets.Items {
		out = append(out, "ManagedClusterSet "+o.Name+"@"+o.ResourceVersion)
	}
	for _, o := range bindings.Items {
		out = append(out, "ManagedClusterSetBinding "+o.Namespace+"/"+o.Name+"@"+o.ResourceVersion)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// testClusterSetNamespaces adds managed namespaces to set prod and leaves it
// with team-a, team-b and team-c.
func testClusterSetNamespaces(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	t.Run("invalid names change nothing", func(t *testing.T) {
		was := snapshot(ctx, t, c)
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "set", "prod", "--namespaces", "team-a,Team_B"), `namespace name "Team_B" is invalid`)
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "set", "prod"), "nothing to set")
		if now := snapshot(ctx, t, c); now != was {
			t.Errorf("objects changed after refused commands:\n%s\nwas\n%s", now, was)
		}
	})
	t.Run("add", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "prod", "--namespaces", "team-a,team-b"),
			"Namespace team-a added to the managed namespaces of ManagedClusterSet prod\n", "Namespace team-b added")
		r := k.Run(ctx, "clusterset", "set", "prod", "--namespaces", "team-b,team-c", "-o", "json")
		clitest.ExpectOK(t, r)
		var res clusterset.SetResult
		if err := json.Unmarshal([]byte(r.Out), &res); err != nil {
			t.Fatalf("-o json: %v\n%s", err, r.Out)
		}
		if fmt.Sprint(res.AddedNamespaces, res.ManagedNamespaces) != "[team-c] [team-a team-b team-c]" || res.DryRun != "" {
			t.Errorf("result = %+v, want team-c added to team-a,team-b, no dry run", res)
		}
		if got := managedNamespaces(ctx, t, c, "prod"); got != "team-a,team-b,team-c" {
			t.Errorf("managed namespaces of prod = %s, want team-a,team-b,team-c", got)
		}
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, set); err != nil {
			t.Fatal(err)
		}
		clitest.ExpectFieldManager(t, set, "kubectl-ocm-clusterset-set/Update")
	})
	t.Run("of a label selector set", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "eu", "--namespaces", "team-eu"), "Namespace team-eu added")
		if got := managedNamespaces(ctx, t, c, "eu"); got != "team-eu" {
			t.Errorf("managed namespaces of eu = %s, want team-eu", got)
		}
	})
	t.Run("shown by get clustersets", func(t *testing.T) {
		for _, args := range [][]string{{"clusterset", "get"}, {"get", "clustersets"}} {
			r := k.Run(ctx, args...)
			clitest.ExpectOK(t, r)
			if !clitest.HasRow(r.Out, "prod", "apps", "3", "ExclusiveClusterSetLabel", "team-a,team-b,team-c") {
				t.Errorf("%s: no row of prod with its managed namespaces:\n%s", strings.Join(args, " "), r.Out)
			}
		}
	})
}

// testClusterSetDryRun runs set, bind and unbind with --dry-run=client and
// =server, as the admin and as user bob, who may write clusters, sets and
// bindings but holds neither join nor bind on any set: nothing changes, and
// the server dry runs report what the hub's admission refuses.
func testClusterSetDryRun(ctx context.Context, t *testing.T, env *framework.Environment, k clitest.CLI, c client.Client) {
	unchanged := func(t *testing.T, was string) {
		t.Helper()
		if now := snapshot(ctx, t, c); now != was {
			t.Errorf("objects changed by a dry run:\n%s\nwas\n%s", now, was)
		}
	}
	for _, mode := range []string{"client", "server"} {
		suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
		t.Run(mode, func(t *testing.T) {
			was := snapshot(ctx, t, c)
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "prod", "--clusters", "c4,c1", "--namespaces", "team-a,team-d", "--dry-run="+mode),
				"Namespace team-a is already a managed namespace of ManagedClusterSet prod\n",
				"Namespace team-d added to the managed namespaces of ManagedClusterSet prod"+suffix+"\n",
				"Cluster c4 added to ManagedClusterSet prod"+suffix+"\n",
				"Cluster c1 is already in ManagedClusterSet prod\n")
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "prod", "--clusters", "c4", "--dry-run="+mode, "-o", "yaml"), "dryRun: "+mode, "name: c4")
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "bind", "eu", "-n", "apps", "--dry-run="+mode), "ManagedClusterSet eu bound to namespace apps"+suffix+"\n")
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "bind", "eu", "-n", "apps", "--dry-run="+mode, "-o", "json"), `"dryRun": "`+mode+`"`, `"bound": true`)
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "unbind", "prod", "-n", "apps", "--dry-run="+mode), "ManagedClusterSet prod unbound from namespace apps"+suffix+"\n")
			clitest.ExpectOK(t, k.Run(ctx, "clusterset", "unbind", "prod", "-n", "apps", "--dry-run="+mode, "-o", "yaml"), "dryRun: "+mode, "bound: false")
			clitest.ExpectErr(t, k.Run(ctx, "clusterset", "unbind", "eu", "-n", "apps", "--dry-run="+mode), "ManagedClusterSet eu is not bound to namespace apps")
			clitest.ExpectErr(t, k.Run(ctx, "clusterset", "bind", "eu", "-n", "nowhere", "--dry-run="+mode), "namespace nowhere does not exist on the hub")
			unchanged(t, was)
		})
	}
	t.Run("admission", func(t *testing.T) {
		bob := clusterWriter(ctx, t, env)
		was := snapshot(ctx, t, c)
		// The client dry run sends no write, so the hub admits nothing.
		clitest.ExpectOK(t, bob.Run(ctx, "clusterset", "set", "prod", "--clusters", "c4", "--dry-run=client"), "Cluster c4 added to ManagedClusterSet prod (dry run)")
		clitest.ExpectOK(t, bob.Run(ctx, "clusterset", "bind", "eu", "-n", "apps", "--dry-run=client"), "(dry run)")
		clitest.ExpectErr(t, bob.Run(ctx, "clusterset", "set", "prod", "--clusters", "c4", "--dry-run=server"), "label managed cluster c4", "managedclustersets/join")
		clitest.ExpectErr(t, bob.Run(ctx, "clusterset", "bind", "eu", "-n", "apps", "--dry-run=server"), "bind ManagedClusterSet eu to namespace apps", "managedclustersets/bind")
		// Changing the set's own spec needs no more than RBAC's patch.
		clitest.ExpectOK(t, bob.Run(ctx, "clusterset", "set", "prod", "--namespaces", "team-d", "--dry-run=server"), "Namespace team-d added to the managed namespaces of ManagedClusterSet prod (server dry run)")
		unchanged(t, was)
	})
}

// clusterWriter returns a cli for user bob, who may read and patch
// ManagedClusters and ManagedClusterSets and write the bindings of namespace
// apps, but may neither join nor bind any set.
func clusterWriter(ctx context.Context, t *testing.T, env *framework.Environment) clitest.CLI {
	t.Helper()
	return clitest.AsUser(ctx, t, env.Cluster("hub"), clitest.User{Name: "bob", Grants: []clitest.Grant{
		{Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters", "managedclustersets"},
			Verbs: []string{"get", "list", "watch", "patch", "update"}}}},
		{Namespace: "apps", Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersetbindings"},
			Verbs: []string{"get", "list", "create", "patch", "update", "delete"}}}},
	}})
}
