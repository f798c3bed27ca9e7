package addoncli

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// specHash returns a configuration with a spec hash.
func specHash(namespace, name, hash string) *addonv1alpha1.ConfigSpecHash {
	return &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: namespace, Name: name}, SpecHash: hash}
}

// testInspect writes the status the add-on manager and the agents would
// write, registers the self-managed add-on policy, and checks list and get.
func testInspect(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	template := addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource}
	deployment := addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource}
	updateMCA(ctx, t, c, "cluster1", "hello", true, func(m *addonv1alpha1.ManagedClusterAddOn) {
		m.Status.Conditions = []metav1.Condition{
			condition("Available", "True", "ProbeAvailable", ""), condition("Degraded", "False", "AsExpected", ""),
			condition("Progressing", "False", "Completed", ""), condition("Configured", "True", "ConfigurationsConfigured", ""),
		}
		m.Status.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized
		m.Status.Namespace = "agents"
		m.Status.ConfigReferences = []addonv1alpha1.ConfigReference{
			{ConfigGroupResource: template, ConfigReferent: addonv1alpha1.ConfigReferent{Name: "hello-0.0.1"},
				DesiredConfig: specHash("", "hello-0.0.1", "0123456789abcdef"), LastAppliedConfig: specHash("", "hello-0.0.1", "0123456789abcdef")},
			{ConfigGroupResource: deployment, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "cluster1", Name: "proxy"},
				DesiredConfig: specHash("cluster1", "proxy", "fedcba9876543210")},
		}
	})
	updateMCA(ctx, t, c, "cluster2", "hello", true, func(m *addonv1alpha1.ManagedClusterAddOn) {
		m.Status.Conditions = []metav1.Condition{
			condition("Available", "Unknown", "ManagedClusterAddOnLeaseNotFound", "the agent has no lease"),
			condition("Progressing", "True", "WaitingForManifestApplied", ""),
		}
	})
	kit.MustCreate(ctx, t, c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "policy",
		Annotations: map[string]string{addonv1alpha1.AddonLifecycleAnnotationKey: addonv1alpha1.AddonLifecycleSelfManageAnnotationValue}},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}}})
	placed := &addonv1alpha1.ClusterManagementAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Name: "placed"}, placed); err != nil {
		t.Fatal(err)
	}
	placed.Status.InstallProgressions = []addonv1alpha1.InstallProgression{{
		PlacementRef: addonv1alpha1.PlacementRef{Namespace: "apps", Name: "all"},
		ConfigReferences: []addonv1alpha1.InstallConfigReference{{
			ConfigGroupResource: template, DesiredConfig: specHash("", "placed-0.0.2", "aaaabbbbccccdddd"), LastAppliedConfig: specHash("", "placed-0.0.1", "1111222233334444"),
		}},
		Conditions: []metav1.Condition{condition("Progressing", "True", "Progressing", "1/2 progressing..., 0 failed 0 timeout")},
	}}
	if err := c.Status().Update(ctx, placed); err != nil {
		t.Fatal(err)
	}

	t.Run("list", func(t *testing.T) {
		r := k.Run(ctx, "addon", "list")
		clitest.ExpectOK(t, r)
		expectRows(t, r.Out,
			"NAME INSTALL STRATEGY LIFECYCLE ENABLED AVAILABLE PROGRESSING AGE",
			"hello Manual addon-manager 2 1 1",
			"placed Placements: apps/all addon-manager 1 1 0",
			"policy Manual self 0 0 0")
		r = k.Run(ctx, "addon", "list", "-o", "wide")
		clitest.ExpectOK(t, r)
		expectRows(t, r.Out, "hello Manual addon-manager 2 1 1")
		clitest.ExpectOK(t, r, "addontemplates/placed-0.0.2, addondeploymentconfigs\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "list", "-o", "name"),
			"clustermanagementaddon.addon.open-cluster-management.io/hello\nclustermanagementaddon.addon.open-cluster-management.io/placed\nclustermanagementaddon.addon.open-cluster-management.io/policy\n")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "list", "-o", "json"), `"kind": "ClusterManagementAddOn"`, `"name": "policy"`)
		clitest.ExpectOK(t, k.Run(ctx, "addon", "list", "-o", "jsonpath={.items[*].metadata.name}"), "hello placed policy")
	})

	t.Run("get", func(t *testing.T) {
		r := k.Run(ctx, "addon", "get", "hello")
		clitest.ExpectOK(t, r)
		expectRows(t, r.Out,
			"CLUSTER AVAILABLE DEGRADED PROGRESSING HEALTH CONFIGS AGE",
			"cluster1 True False False (Completed) Customized addontemplates/hello-0.0.1@01234567 (applied), addondeploymentconfigs/cluster1/proxy@fedcba98 (not applied)",
			"cluster2 Unknown True (WaitingForManifestApplied) Lease")
		r = k.Run(ctx, "addon", "get", "hello", "--clusters", "cluster2", "-o", "wide")
		clitest.ExpectOK(t, r, "Available: the agent has no lease")
		expectRows(t, r.Out, "cluster2 Unknown True (WaitingForManifestApplied) Lease")
		if clitest.HasRow(r.Out, "cluster1") {
			t.Errorf("--clusters cluster2 shows cluster1:\n%s", r.Out)
		}
		clitest.ExpectOK(t, k.Run(ctx, "addon", "get", "hello", "-o", "yaml"), "kind: ManagedClusterAddOn", "namespace: cluster1", "namespace: cluster2")
		clitest.ExpectOK(t, k.Run(ctx, "addon", "get", "hello", "--clusters", "cluster1", "-o", "name"), "managedclusteraddon.addon.open-cluster-management.io/hello\n")

		r = k.Run(ctx, "addon", "get", "placed")
		clitest.ExpectOK(t, r, "\nInstall progressions of placed (Placements: apps/all):\n")
		expectRows(t, r.Out,
			"PLACEMENT PROGRESSING CONFIGS MESSAGE",
			"apps/all True (Progressing) addontemplates/placed-0.0.2@aaaabbbb (applied placed-0.0.1@11112222) 1/2 progressing..., 0 failed 0 timeout")

		r = k.Run(ctx, "addon", "get", "policy")
		clitest.ExpectOK(t, r)
		if r.ErrOut != "Add-on policy is not enabled on any managed cluster: enable it with `kubectl ocm addon enable --names policy --clusters NAME[,NAME...]`.\n" {
			t.Errorf("stderr = %q", r.ErrOut)
		}
		clitest.ExpectErr(t, k.Run(ctx, "addon", "get", "ghost"), "add-on ghost is not known on this hub", "the add-ons are hello, placed, policy")
		clitest.ExpectErr(t, k.Run(ctx, "addon", "get", "hello", "--clusters", "ghost"), "managed cluster ghost does not exist on this hub")
	})
}
