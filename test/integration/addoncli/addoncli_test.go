package addoncli

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestAddonCLI runs the add-on command tests against one hub, in order: the
// add-ons create makes are enabled, inspected and disabled by the later ones.
func TestAddonCLI(t *testing.T) {
	ctx, k, c := setup(t)
	t.Run("create", func(t *testing.T) { testCreate(ctx, t, k, c) })
	t.Run("enable", func(t *testing.T) { testEnable(ctx, t, k, c) })
	t.Run("list and get", func(t *testing.T) { testInspect(ctx, t, k, c) })
	t.Run("disable", func(t *testing.T) { testDisable(ctx, t, k, c) })
	t.Run("completion", func(t *testing.T) { testCompletion(ctx, t, k) })
}

// agentManifests are the manifests of a small template add-on agent.
var agentManifests = map[string]string{
	"agent.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: hello-agent, namespace: open-cluster-management-agent-addon}
spec:
  selector: {matchLabels: {app: hello-agent}}
  template:
    metadata: {labels: {app: hello-agent}}
    spec:
      serviceAccountName: hello-agent
      containers: [{name: agent, image: example.com/hello:1, args: ["--cluster={{CLUSTER_NAME}}", "--hub-kubeconfig={{HUB_KUBECONFIG}}"]}]
`,
	"rbac/sa.yaml": `apiVersion: v1
kind: ServiceAccount
metadata: {name: hello-agent, namespace: open-cluster-management-agent-addon}
`,
}

// testCreate registers add-ons hello (Manual) and placed (Placements) and
// checks what create refuses.
func testCreate(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	dir := writeFiles(t, agentManifests)

	t.Run("manual, with a hub credential", func(t *testing.T) {
		clitest.ExpectOK(t, k.Run(ctx, "addon", "create", "hello", "-f", dir, "-R", "--hub-registration", "--cluster-role-bind", "hello-agent", "--labels", "team=ops"),
			"AddOnTemplate hello-0.0.1 created\nClusterManagementAddOn hello created\n")
		tmpl := &addonv1alpha1.AddOnTemplate{}
		if err := c.Get(ctx, client.ObjectKey{Name: "hello-0.0.1"}, tmpl); err != nil {
			t.Fatal(err)
		}
		if tmpl.Spec.AddonName != "hello" || len(tmpl.Spec.AgentSpec.Workload.Manifests) != 2 || tmpl.Labels["team"] != "ops" {
			t.Errorf("template: add-on %q, %d manifests, labels %v", tmpl.Spec.AddonName, len(tmpl.Spec.AgentSpec.Workload.Manifests), tmpl.Labels)
		}
		if r := tmpl.Spec.Registration; len(r) != 1 || r[0].Type != addonv1alpha1.RegistrationTypeKubeClient || r[0].KubeClient == nil ||
			len(r[0].KubeClient.HubPermissions) != 1 || r[0].KubeClient.HubPermissions[0].CurrentCluster.ClusterRoleName != "hello-agent" {
			t.Errorf("registration = %+v", r)
		}
		cma := &addonv1alpha1.ClusterManagementAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Name: "hello"}, cma); err != nil {
			t.Fatal(err)
		}
		if cma.Spec.InstallStrategy.Type != addonv1alpha1.InstallStrategyManual || len(cma.Spec.SupportedConfigs) != 2 ||
			!cma.Spec.SupportedConfigs[0].IsTemplateConfig() || cma.Spec.SupportedConfigs[0].DefaultConfig.Name != "hello-0.0.1" {
			t.Errorf("ClusterManagementAddOn spec = %+v", cma.Spec)
		}
		clitest.ExpectFieldManager(t, cma, "kubectl-ocm-addon-create/Apply")
	})

	t.Run("dry runs write nothing", func(t *testing.T) {
		before := snapshot(ctx, t, c)
		clitest.ExpectOK(t, k.Run(ctx, "addon", "create", "other", "-f", dir, "-R", "--dry-run=client", "-o", "yaml"),
			"kind: AddOnTemplate", "name: other-0.0.1", "kind: ClusterManagementAddOn", "type: Manual")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "create", "other", "-f", dir, "-R", "--dry-run=server"),
			"AddOnTemplate other-0.0.1 created (server dry run)\nClusterManagementAddOn other created (server dry run)\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "create", "other", "-f", dir, "-R", "--dry-run=server", "-o", "json"),
			`"kind": "List"`, `"uid": `, `"addonName": "other"`)
		clitest.ExpectOK(t, k.Run(ctx, "addon", "create", "hello", "-f", dir, "-R", "--overwrite", "--dry-run=server"),
			"AddOnTemplate hello-0.0.1 configured (server dry run)\nClusterManagementAddOn hello configured (server dry run)\n")
		if after := snapshot(ctx, t, c); after != before {
			t.Errorf("a dry run changed add-on objects:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	bad := writeFiles(t, map[string]string{
		"dup.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"ns.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: \"{{INSTALL_NAMESPACE}}\"}\n",
		"big.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {x: " + strings.Repeat("x", 600*1024) + "}\n",
	})
	expectUnchanged(ctx, t, k, c, []failing{
		{"an add-on that exists", []string{"addon", "create", "hello", "-f", dir, "-R", "--version", "0.0.2"},
			[]string{"add-on hello exists already (ClusterManagementAddOn hello): add --overwrite"}},
		{"the same object twice", []string{"addon", "create", "other", "-f", bad + "/dup.yaml"},
			[]string{"the manifests of add-on other:", "ConfigMap a is also defined in"}},
		{"a variable as the namespace", []string{"addon", "create", "other", "-f", bad + "/ns.yaml"},
			[]string{`ConfigMap {{INSTALL_NAMESPACE}}/a: metadata.namespace "{{INSTALL_NAMESPACE}}" is not a namespace name`}},
		{"manifests over the size limit", []string{"addon", "create", "other", "-f", bad + "/big.yaml"},
			[]string{"over the 512000-byte (500 KiB) limit"}},
		{"an invalid name", []string{"addon", "create", "Other", "-f", dir}, []string{`add-on name "Other" is invalid`}},
	})

	t.Run("placements and overwrite", func(t *testing.T) {
		r := k.Run(ctx, "addon", "create", "placed", "-f", dir, "-R", "--placement", "apps/all")
		clitest.ExpectOK(t, r, "ClusterManagementAddOn placed created\n")
		if !strings.Contains(r.ErrOut, "Warning: Placement apps/all does not exist") {
			t.Errorf("no warning about the missing placement: %q", r.ErrOut)
		}
		r = k.Run(ctx, "addon", "create", "placed", "-f", dir, "-R", "--placement-ref", "apps/all", "--version", "0.0.2", "--overwrite")
		clitest.ExpectOK(t, r, "AddOnTemplate placed-0.0.2 created\nClusterManagementAddOn placed configured\n")
		if !strings.Contains(r.ErrOut, "AddOnTemplate placed-0.0.1, the previous template of add-on placed, is kept") {
			t.Errorf("no note about the previous template: %q", r.ErrOut)
		}
		cma := &addonv1alpha1.ClusterManagementAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Name: "placed"}, cma); err != nil {
			t.Fatal(err)
		}
		s := cma.Spec.InstallStrategy
		if s.Type != addonv1alpha1.InstallStrategyPlacements || len(s.Placements) != 1 || s.Placements[0].Namespace != "apps" ||
			cma.Spec.SupportedConfigs[0].DefaultConfig.Name != "placed-0.0.2" {
			t.Errorf("ClusterManagementAddOn placed: %+v", cma.Spec)
		}
	})
}
