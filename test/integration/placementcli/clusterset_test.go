package placementcli

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// setOf returns the cluster set label of cluster name.
func setOf(ctx context.Context, t *testing.T, c client.Client, name string) string {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	return mc.Labels[clusterv1beta2.ClusterSetLabel]
}

// testClusterSet leaves set prod (c1, c2, c3) bound to namespace apps.
func testClusterSet(ctx context.Context, t *testing.T, k cli, c client.Client) {
	t.Run("create", func(t *testing.T) {
		expectOK(t, k.run(ctx, "clusterset", "create", "prod"), "ManagedClusterSet prod created\n")
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, set); err != nil {
			t.Fatal(err)
		}
		if set.Spec.ClusterSelector.SelectorType != clusterv1beta2.ExclusiveClusterSetLabel {
			t.Errorf("selector type = %q, want ExclusiveClusterSetLabel", set.Spec.ClusterSelector.SelectorType)
		}
		expectErr(t, k.run(ctx, "clusterset", "create", "prod"), "ManagedClusterSet prod already exists", "clusterset set prod")
		expectOK(t, k.run(ctx, "clusterset", "create", "eu", "--cluster-selector", "region in (eu)"), "ManagedClusterSet eu created")
		if err := c.Get(ctx, client.ObjectKey{Name: "eu"}, set); err != nil || set.Spec.ClusterSelector.SelectorType != clusterv1beta2.LabelSelector {
			t.Errorf("set eu: err = %v, selector %+v; want a LabelSelector set", err, set.Spec.ClusterSelector)
		}
	})
	t.Run("set refuses unknown clusters and changes nothing", func(t *testing.T) {
		expectErr(t, k.run(ctx, "clusterset", "set", "prod", "--clusters", "c1,nope"), "managed cluster nope does not exist")
		if got := setOf(ctx, t, c, "c1"); got != "" {
			t.Errorf("c1 is in set %q after a refused set; want no set", got)
		}
		expectErr(t, k.run(ctx, "clusterset", "set", "missing", "--clusters", "c1"), "ManagedClusterSet missing does not exist", "clusterset create missing")
		expectErr(t, k.run(ctx, "clusterset", "set", "eu", "--clusters", "c1"), "selects its clusters with a label selector")
	})
	t.Run("set", func(t *testing.T) {
		expectOK(t, k.run(ctx, "clusterset", "set", "prod", "--clusters", "c1,c2,c3"), "Cluster c1 added to ManagedClusterSet prod", "Cluster c3 added")
		for _, name := range []string{"c1", "c2", "c3"} {
			if got := setOf(ctx, t, c, name); got != "prod" {
				t.Errorf("%s is in set %q, want prod", name, got)
			}
		}
	})
	t.Run("bind", func(t *testing.T) {
		expectErr(t, k.run(ctx, "clusterset", "bind", "prod", "-n", "nowhere"), "namespace nowhere does not exist on the hub", "kubectl create namespace nowhere")
		expectOK(t, k.run(ctx, "clusterset", "bind", "prod", "-n", "apps"), "ManagedClusterSet prod bound to namespace apps")
		b := &clusterv1beta2.ManagedClusterSetBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "prod"}, b); err != nil || b.Spec.ClusterSet != "prod" {
			t.Errorf("binding apps/prod: err = %v, spec %+v", err, b.Spec)
		}
		expectErr(t, k.run(ctx, "clusterset", "bind", "ghost", "-n", "apps"), "ManagedClusterSet ghost does not exist")
	})
	t.Run("get", func(t *testing.T) {
		r := k.run(ctx, "clusterset", "get")
		expectOK(t, r)
		if !hasRow(r.out, "prod", "apps", "3", "ExclusiveClusterSetLabel") || !hasRow(r.out, "eu", "1", "LabelSelector") {
			t.Errorf("table lacks prod (apps, 3 clusters) or eu (1 cluster):\n%s", r.out)
		}
		expectOK(t, k.run(ctx, "clusterset", "get", "prod", "-o", "yaml"), "kind: ManagedClusterSet", "name: prod")
		expectOK(t, k.run(ctx, "clusterset", "get", "-o", "name"), "managedclusterset.cluster.open-cluster-management.io/prod")
	})
	t.Run("delete refusals", func(t *testing.T) {
		for _, name := range []string{"default", "global"} {
			expectErr(t, k.run(ctx, "clusterset", "delete", name), "ManagedClusterSet "+name+" cannot be deleted")
		}
		expectErr(t, k.run(ctx, "clusterset", "delete", "prod"), "ManagedClusterSet prod is bound to namespace(s) apps", "clusterset unbind prod -n apps", "--force")
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
			t.Errorf("set prod after a refused delete: %v", err)
		}
		expectErr(t, k.run(ctx, "clusterset", "delete", "ghost"), "ManagedClusterSet ghost not found")
	})
	t.Run("unbind and forced delete", func(t *testing.T) {
		expectOK(t, k.run(ctx, "clusterset", "create", "tmp"))
		expectOK(t, k.run(ctx, "clusterset", "set", "tmp", "--clusters", "c5"))
		expectOK(t, k.run(ctx, "clusterset", "bind", "tmp", "-n", "apps"))
		r := k.run(ctx, "clusterset", "delete", "tmp", "--force")
		expectOK(t, r, "ManagedClusterSet tmp deleted")
		for _, w := range []string{"had 1 member cluster(s) (c5)", "the bindings in namespace(s) apps remain"} {
			if !strings.Contains(r.errOut, w) {
				t.Errorf("stderr lacks %q:\n%s", w, r.errOut)
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "tmp"}, &clusterv1beta2.ManagedClusterSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("set tmp after a forced delete: err = %v, want NotFound", err)
		}
		expectOK(t, k.run(ctx, "clusterset", "unbind", "tmp", "-n", "apps"), "ManagedClusterSet tmp unbound from namespace apps")
		expectErr(t, k.run(ctx, "clusterset", "unbind", "tmp", "-n", "apps"), "ManagedClusterSet tmp is not bound to namespace apps")
		expectOK(t, k.run(ctx, "clusterset", "unbind", "tmp", "-n", "apps", "--ignore-not-found"))
	})
	t.Run("completion", func(t *testing.T) {
		r := k.run(ctx, "__complete", "clusterset", "bind", "p")
		expectOK(t, r, "prod\n")
		if strings.Contains(r.out, "eu\n") {
			t.Errorf("completion of p offers eu:\n%s", r.out)
		}
	})
}
