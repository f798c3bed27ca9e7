package addoncli

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testDisable checks what disable refuses, its dry runs, a wait held by the
// pre-delete hook, and --all-clusters.
func testDisable(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	expectUnchanged(ctx, t, k, c, []failing{
		{"an unknown add-on", []string{"addon", "disable", "--names", "hello,ghost", "--clusters", "cluster1"},
			[]string{"add-on ghost is not known on this hub", "the add-ons are hello, placed, policy"}},
		{"an unknown cluster", []string{"addon", "disable", "--names", "hello", "--clusters", "cluster1,ghost"},
			[]string{"managed cluster ghost does not exist on this hub"}},
		{"a cluster the add-on is not enabled on", []string{"addon", "disable", "--names", "hello,placed", "--clusters", "cluster2"},
			[]string{"add-on placed is not enabled on managed cluster(s) cluster2 (no ManagedClusterAddOn placed in their namespaces)", "--ignore-not-found"}},
	})

	t.Run("dry runs delete nothing", func(t *testing.T) {
		before := snapshot(ctx, t, c)
		clitest.ExpectOK(t, k.Run(ctx, "addon", "disable", "--names", "hello", "--clusters", "cluster1", "--dry-run=client"),
			"Undeploying hello add-on in managed cluster: cluster1 (dry run).\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "disable", "--names", "hello", "--all-clusters", "--dry-run=server"),
			"Undeploying hello add-on in managed cluster: cluster1 (server dry run).\nUndeploying hello add-on in managed cluster: cluster2 (server dry run).\n")
		if after := snapshot(ctx, t, c); after != before {
			t.Errorf("a dry run changed add-on objects:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("wait for the pre-delete hook", func(t *testing.T) {
		updateMCA(ctx, t, c, "cluster2", "hello", false, func(m *addonv1alpha1.ManagedClusterAddOn) {
			m.Finalizers = append(m.Finalizers, addonv1alpha1.AddonPreDeleteHookFinalizer)
		})
		updateMCA(ctx, t, c, "cluster2", "hello", true, func(m *addonv1alpha1.ManagedClusterAddOn) {
			m.Status.Conditions = append(m.Status.Conditions, condition(addonv1alpha1.ManagedClusterAddOnHookManifestCompleted, "False", addonv1alpha1.HookManifestReasonNotCompleted, ""))
		})
		released := false
		r, lines := runFollowing(ctx, k, func(line string) {
			if strings.Contains(line, "waiting for the pre-delete hook") && !released {
				released = true
				updateMCA(ctx, t, c, "cluster2", "hello", false, func(m *addonv1alpha1.ManagedClusterAddOn) {
					m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == addonv1alpha1.AddonPreDeleteHookFinalizer })
				})
			}
		}, "addon", "disable", "--names", "hello", "--clusters", "cluster2", "--wait", "--timeout", "30s")
		clitest.ExpectOK(t, r, "Undeploying hello add-on in managed cluster: cluster2.\n")
		want := "Waiting for add-on hello to be removed from managed cluster(s) cluster2: cluster2: waiting for the pre-delete hook " +
			"(finalizer addon.open-cluster-management.io/addon-pre-delete, HookManifestCompleted False (HookManifestIsNotCompleted))"
		if len(lines) != 1 || lines[0] != want {
			t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(lines, "\n"), want)
		}
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: "hello"}}
		framework.Eventually(ctx, t, pollTimeout, "ManagedClusterAddOn cluster2/hello to be gone", gone(c, mca))
	})

	t.Run("ignore not found", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "addon", "disable", "--names", "hello,placed", "--clusters", "cluster1,cluster2", "--ignore-not-found"),
			"Undeploying hello add-on in managed cluster: cluster1.\nUndeploying placed add-on in managed cluster: cluster1.\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "disable", "--names", "hello", "--all-clusters"), "Add-on hello is not enabled on any managed cluster.\n")
	})

	t.Run("all clusters", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "policy", "--clusters", "cluster1,cluster2"))
		clitest.ExpectOK(t, k.Run(ctx, "addon", "disable", "--names", "policy", "--all-clusters", "--wait"),
			"Undeploying policy add-on in managed cluster: cluster1.\nUndeploying policy add-on in managed cluster: cluster2.\n")
		list := &addonv1alpha1.ManagedClusterAddOnList{}
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("%d ManagedClusterAddOns left", len(list.Items))
		}
	})
}

// testCompletion completes add-on and cluster names from the hub.
func testCompletion(ctx context.Context, t *testing.T, k clitest.CLI) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"addon", "enable", "--names", ""}, "hello\nplaced\npolicy\n"},
		{[]string{"addon", "enable", "--names", "hello,p"}, "hello,placed\nhello,policy\n"},
		{[]string{"addon", "enable", "--names", "hello", "--clusters", ""}, "cluster1\ncluster2\npending\n"},
		{[]string{"addon", "disable", "--names", "po"}, "policy\n"},
		{[]string{"addon", "disable", "--clusters", "cluster1,"}, "cluster1,cluster2\ncluster1,pending\n"},
		{[]string{"addon", "get", "pl"}, "placed\n"},
		{[]string{"addon", "get", "hello", ""}, ":4\n"},
		{[]string{"addon", "get", "hello", "--clusters", "c"}, "cluster1\ncluster2\n"},
		{[]string{"addon", ""}, "create\t"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			clitest.ExpectOK(t, k.Run(ctx, append([]string{"__complete"}, tt.args...)...), tt.want)
		})
	}
}
