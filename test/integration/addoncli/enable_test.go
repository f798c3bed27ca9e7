package addoncli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testEnable enables hello on cluster1 and cluster2 and placed on cluster1,
// and checks what enable refuses.
func testEnable(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	configFile := filepath.Join(writeFiles(t, map[string]string{"configs.yaml": `configs:
- group: addon.open-cluster-management.io
  resource: addondeploymentconfigs
  namespace: cluster1
  name: proxy
`}), "configs.yaml")

	t.Run("enable", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "hello", "--clusters", "cluster1,cluster2", "-n", "agents",
			"--annotate", "owner=ops", "--labels", "tier=edge", "--config-file", configFile),
			"Deploying hello add-on to namespaces agents of managed cluster: cluster1.\n"+
				"Deploying hello add-on to namespaces agents of managed cluster: cluster2.\n")
		for _, cluster := range []string{"cluster1", "cluster2"} {
			mca := getMCA(ctx, t, c, cluster, "hello")
			if mca.AgentInstallNamespace() != "agents" || mca.Annotations["owner"] != "ops" || mca.Labels["tier"] != "edge" ||
				len(mca.Spec.Configs) != 1 || mca.Spec.Configs[0].Name != "proxy" || mca.Spec.Configs[0].Resource != addonv1alpha1.AddOnDeploymentConfigResource {
				t.Errorf("ManagedClusterAddOn %s/hello: %+v %+v", cluster, mca.ObjectMeta, mca.Spec)
			}
			clitest.ExpectFieldManager(t, mca, "kubectl-ocm-addon-enable/Apply")
		}
	})

	t.Run("enable again updates", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "hello", "--clusters", "cluster2", "-o", "name"),
			"managedclusteraddon.addon.open-cluster-management.io/hello\n")
		mca := getMCA(ctx, t, c, "cluster2", "hello")
		if mca.AgentInstallNamespace() != addonv1alpha1.DefaultAddonInstallNamespace || len(mca.Spec.Configs) != 0 || mca.Labels["tier"] != "" {
			t.Errorf("ManagedClusterAddOn cluster2/hello after a second enable: %+v %+v", mca.ObjectMeta, mca.Spec)
		}
	})

	expectUnchanged(ctx, t, k, c, []failing{
		{"an unknown add-on", []string{"addon", "enable", "--names", "placed,ghost", "--clusters", "cluster1"},
			[]string{"add-on ghost is not known on this hub: there is no ClusterManagementAddOn ghost; the add-ons are hello, placed"}},
		{"an unknown cluster", []string{"addon", "enable", "--names", "placed", "--clusters", "cluster1,ghost"},
			[]string{"managed cluster ghost does not exist on this hub: the clusters are cluster1, cluster2, pending"}},
		{"a cluster not accepted", []string{"addon", "enable", "--names", "placed", "--clusters", "pending"},
			[]string{"managed cluster pending is not accepted by the hub: run `kubectl ocm accept --clusters pending` first"}},
		{"a bad config file", []string{"addon", "enable", "--names", "placed", "--clusters", "cluster1", "--config-file", configFile + ".missing"},
			[]string{"--config-file: open "}},
		{"an invalid install namespace", []string{"addon", "enable", "--names", "placed", "--clusters", "cluster1", "-n", "Agents"},
			[]string{`--namespace "Agents" is not a valid namespace name`}},
	})

	t.Run("dry runs write nothing", func(t *testing.T) {
		before := snapshot(ctx, t, c)
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "placed", "--clusters", "cluster1", "--dry-run=client", "-o", "yaml"),
			"kind: ManagedClusterAddOn", "namespace: cluster1", "installNamespace: open-cluster-management-agent-addon")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "placed", "--clusters", "cluster1,cluster2", "--dry-run=server"),
			"Deploying placed add-on to namespaces open-cluster-management-agent-addon of managed cluster: cluster1 (server dry run).\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "enable", "--names", "placed", "--clusters", "cluster1", "--dry-run=server", "-o", "json"),
			`"kind": "ManagedClusterAddOn"`, `"creationTimestamp": "20`)
		if after := snapshot(ctx, t, c); after != before {
			t.Errorf("a dry run changed add-on objects:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("wait until available", func(t *testing.T) {
		patched := false
		r, lines := runFollowing(ctx, k, func(line string) {
			if strings.Contains(line, "cluster1: Available not reported yet") && !patched {
				patched = true
				updateMCA(ctx, t, c, "cluster1", "placed", true, func(m *addonv1alpha1.ManagedClusterAddOn) {
					m.Status.Conditions = []metav1.Condition{condition("Available", "False", "ProbeUnavailable", "")}
				})
			}
			if strings.Contains(line, "cluster1: Available False (ProbeUnavailable)") {
				updateMCA(ctx, t, c, "cluster1", "placed", true, func(m *addonv1alpha1.ManagedClusterAddOn) {
					m.Status.Conditions = []metav1.Condition{condition("Available", "True", "ProbeAvailable", "")}
				})
			}
		}, "addon", "enable", "--names", "placed", "--clusters", "cluster1", "--wait", "--timeout", "30s")
		clitest.ExpectOK(t, r, "Deploying placed add-on to namespaces open-cluster-management-agent-addon of managed cluster: cluster1.\n",
			"Add-on placed is available on managed cluster(s) cluster1.\n")
		// The hub controller runs in-process here: its Deployment, which
		// nothing runs, is named while the add-on is not available.
		const hubController = "; Deployment open-cluster-management-hub/ocm-hub-controller: the deployment controller has not observed generation 1 yet (observed 0)"
		want := []string{
			"Waiting for add-on placed to be available on managed cluster(s) cluster1: cluster1: Available not reported yet" + hubController,
			"Waiting for add-on placed to be available on managed cluster(s) cluster1: cluster1: Available False (ProbeUnavailable)" + hubController,
			"Waiting for add-on placed to be available on managed cluster(s) cluster1: cluster1: Available True (ProbeAvailable)",
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("wait times out naming the state", func(t *testing.T) {
		r := k.Run(ctx, "addon", "enable", "--names", "hello", "--clusters", "cluster2", "--wait", "--timeout", "1s")
		clitest.ExpectErr(t, r, "timed out after 1s waiting for add-on hello to be available on managed cluster(s) cluster2; last state: cluster2: Available not reported yet",
			"see `kubectl ocm addon get hello`")
	})
}
