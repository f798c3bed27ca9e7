package placementcli

import (
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"

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
func testClusterSet(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	t.Run("create", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "create", "prod"), "ManagedClusterSet prod created\n")
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, set); err != nil {
			t.Fatal(err)
		}
		if set.Spec.ClusterSelector.SelectorType != clusterv1beta2.ExclusiveClusterSetLabel {
			t.Errorf("selector type = %q, want ExclusiveClusterSetLabel", set.Spec.ClusterSelector.SelectorType)
		}
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "create", "prod"), "ManagedClusterSet prod already exists", "clusterset set prod")
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "create", "eu", "--cluster-selector", "region in (eu)"), "ManagedClusterSet eu created")
		if err := c.Get(ctx, client.ObjectKey{Name: "eu"}, set); err != nil || set.Spec.ClusterSelector.SelectorType != clusterv1beta2.LabelSelector {
			t.Errorf("set eu: err = %v, selector %+v; want a LabelSelector set", err, set.Spec.ClusterSelector)
		}
	})
	t.Run("set refuses unknown clusters and changes nothing", func(t *testing.T) {
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "set", "prod", "--clusters", "c1,nope"), "managed cluster nope does not exist")
		if got := setOf(ctx, t, c, "c1"); got != "" {
			t.Errorf("c1 is in set %q after a refused set; want no set", got)
		}
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "set", "missing", "--clusters", "c1"), "ManagedClusterSet missing does not exist", "clusterset create missing")
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "set", "eu", "--clusters", "c1"), "selects its clusters with a label selector")
	})
	t.Run("set", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "prod", "--clusters", "c1,c2,c3"), "Cluster c1 added to ManagedClusterSet prod", "Cluster c3 added")
		for _, name := range []string{"c1", "c2", "c3"} {
			if got := setOf(ctx, t, c, name); got != "prod" {
				t.Errorf("%s is in set %q, want prod", name, got)
			}
		}
	})
	t.Run("bind", func(t *testing.T) {
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "bind", "prod", "-n", "nowhere"), "namespace nowhere does not exist on the hub", "kubectl create namespace nowhere")
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "bind", "prod", "-n", "apps"), "ManagedClusterSet prod bound to namespace apps")
		b := &clusterv1beta2.ManagedClusterSetBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "prod"}, b); err != nil || b.Spec.ClusterSet != "prod" {
			t.Errorf("binding apps/prod: err = %v, spec %+v", err, b.Spec)
		}
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "bind", "ghost", "-n", "apps"), "ManagedClusterSet ghost does not exist")
	})
	t.Run("get", func(t *testing.T) {
		r := k.Run(ctx, "clusterset", "get")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "prod", "apps", "3", "ExclusiveClusterSetLabel") || !clitest.HasRow(r.Out, "eu", "1", "LabelSelector") {
			t.Errorf("table lacks prod (apps, 3 clusters) or eu (1 cluster):\n%s", r.Out)
		}
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "get", "prod", "-o", "yaml"), "kind: ManagedClusterSet", "name: prod")
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "get", "-o", "name"), "managedclusterset.cluster.open-cluster-management.io/prod")
	})
	t.Run("delete refusals", func(t *testing.T) {
		for _, name := range []string{"default", "global"} {
			clitest.ExpectErr(t, k.Run(ctx, "clusterset", "delete", name), "ManagedClusterSet "+name+" cannot be deleted")
		}
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "delete", "prod"), "ManagedClusterSet prod is bound to namespace(s) apps", "clusterset unbind prod -n apps", "--force")
		if err := c.Get(ctx, client.ObjectKey{Name: "prod"}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
			t.Errorf("set prod after a refused delete: %v", err)
		}
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "delete", "ghost"), "ManagedClusterSet ghost not found")
	})
	t.Run("unbind and forced delete", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "create", "tmp"))
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "set", "tmp", "--clusters", "c5"))
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "bind", "tmp", "-n", "apps"))
		r := k.Run(ctx, "clusterset", "delete", "tmp", "--force")
		clitest.ExpectOK(t, r, "ManagedClusterSet tmp deleted")
		for _, w := range []string{"had 1 member cluster(s) (c5)", "the bindings in namespace(s) apps remain"} {
			if !strings.Contains(r.ErrOut, w) {
				t.Errorf("stderr lacks %q:\n%s", w, r.ErrOut)
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "tmp"}, &clusterv1beta2.ManagedClusterSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("set tmp after a forced delete: err = %v, want NotFound", err)
		}
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "unbind", "tmp", "-n", "apps"), "ManagedClusterSet tmp unbound from namespace apps")
		clitest.ExpectErr(t, k.Run(ctx, "clusterset", "unbind", "tmp", "-n", "apps"), "ManagedClusterSet tmp is not bound to namespace apps")
		clitest.ExpectOK(t, k.Run(ctx, "clusterset", "unbind", "tmp", "-n", "apps", "--ignore-not-found"))
	})
	t.Run("completion", func(t *testing.T) {
		r := k.Run(ctx, "__complete", "clusterset", "bind", "p")
		clitest.ExpectOK(t, r, "prod\n")
		if strings.Contains(r.Out, "eu\n") {
			t.Errorf("completion of p offers eu:\n%s", r.Out)
		}
	})
}
