package addon

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

var now = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

// cond returns a condition of type typ with status, reason and message.
func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
}

// hash returns a spec hash reference to namespace/name.
func hash(namespace, name, specHash string) *addonv1alpha1.ConfigSpecHash {
	return &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: namespace, Name: name}, SpecHash: specHash}
}

// mca returns ManagedClusterAddOn name of cluster, created an hour ago, with conds.
func mca(cluster, name string, conds ...metav1.Condition) addonv1alpha1.ManagedClusterAddOn {
	return addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Conditions: conds},
	}
}

// render prints table and returns its text.
func render(t *testing.T, table *metav1.Table, wide bool) string {
	t.Helper()
	var out strings.Builder
	if err := cli.PrintTable(&out, table, wide); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// expectLines fails t unless got holds each want as a line, columns
// separated by any run of spaces.
func expectLines(t *testing.T, got string, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("no line %q in:\n%s", w, got)
		}
	}
}

func TestAddonsTable(t *testing.T) {
	manual := NewClusterManagementAddOn("hello", "hello-0.0.1", nil, nil)
	manual.CreationTimestamp = metav1.NewTime(now.Add(-2 * time.Hour))
	placed := NewClusterManagementAddOn("placed", "placed-1", &addonv1alpha1.PlacementRef{Namespace: "apps", Name: "all"}, nil)
	placed.Spec.InstallStrategy.Placements = append(placed.Spec.InstallStrategy.Placements, addonv1alpha1.PlacementStrategy{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ops", Name: "edge"}})
	placed.CreationTimestamp = manual.CreationTimestamp
	self := addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "policy", CreationTimestamp: manual.CreationTimestamp,
		Annotations: map[string]string{addonv1alpha1.AddonLifecycleAnnotationKey: addonv1alpha1.AddonLifecycleSelfManageAnnotationValue}}}
	mcas := []addonv1alpha1.ManagedClusterAddOn{
		mca("cluster1", "hello", cond("Available", "True", "", ""), cond("Progressing", "False", "Completed", "")),
		mca("cluster2", "hello", cond("Available", "Unknown", "", ""), cond("Progressing", "True", "Progressing", ""), cond("Degraded", "True", "", "")),
		mca("cluster3", "hello"),
		mca("cluster1", "placed", cond("Available", "True", "", "")),
	}
	table := AddonsTable([]addonv1alpha1.ClusterManagementAddOn{*manual, *placed, self}, mcas, now)
	expectLines(t, render(t, table, false),
		"NAME INSTALL STRATEGY LIFECYCLE ENABLED AVAILABLE PROGRESSING AGE",
		"hello Manual addon-manager 3 1 1 120m",
		"placed Placements: apps/all,ops/edge addon-manager 1 1 0 120m",
		"policy Manual self 0 0 0 120m",
	)
	expectLines(t, render(t, table, true),
		"NAME INSTALL STRATEGY LIFECYCLE ENABLED AVAILABLE PROGRESSING AGE DISPLAY NAME DEGRADED SUPPORTED CONFIGS",
		"hello Manual addon-manager 3 1 1 120m hello 1 addontemplates/hello-0.0.1, addondeploymentconfigs",
		"policy Manual self 0 0 0 120m 0",
	)
}

func TestClustersTable(t *testing.T) {
	ready := mca("cluster1", "hello", cond("Available", "True", "ProbeAvailable", ""), cond("Degraded", "False", "", ""),
		cond("Progressing", "False", "Completed", ""), cond("Configured", "True", "ConfigurationsConfigured", ""))
	ready.Status.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized
	ready.Status.Namespace = "agents"
	ready.Status.ConfigReferences = []addonv1alpha1.ConfigReference{
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addontemplates"}, DesiredConfig: hash("", "hello-0.0.1", "1a2b3c4d5e6f"), LastAppliedConfig: hash("", "hello-0.0.1", "1a2b3c4d5e6f")},
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addondeploymentconfigs"}, DesiredConfig: hash("cluster1", "proxy", "aaaaaaaabbbb"), LastAppliedConfig: hash("cluster1", "proxy", "ccccccccdddd")},
	}
	rolling := mca("cluster2", "hello", cond("Available", "False", "ManagedClusterAddOnLeaseUpdateStopped", "the lease is 5m old"),
		cond("Progressing", "True", "Progressing", "applying 2 configs"))
	rolling.Status.Namespace = "custom"
	rolling.Status.ConfigReferences = []addonv1alpha1.ConfigReference{
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addontemplates"}, DesiredConfig: hash("", "hello-0.0.2", "99998888"), LastAppliedConfig: hash("", "hello-0.0.1", "1a2b3c4d")},
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addondeploymentconfigs"}, DesiredConfig: hash("cluster2", "proxy", "77776666")},
	}
	fresh := mca("cluster3", "hello")
	table := ClustersTable([]addonv1alpha1.ManagedClusterAddOn{ready, rolling, fresh}, now)
	expectLines(t, render(t, table, false),
		"CLUSTER AVAILABLE DEGRADED PROGRESSING HEALTH CONFIGS AGE",
		"cluster1 True False False (Completed) Customized addontemplates/hello-0.0.1@1a2b3c4d (applied), addondeploymentconfigs/cluster1/proxy@aaaaaaaa (applied cccccccc) 60m",
		"cluster2 False True (Progressing) Lease addontemplates/hello-0.0.2@99998888 (applied hello-0.0.1@1a2b3c4d), addondeploymentconfigs/cluster2/proxy@77776666 (not applied) 60m",
		"cluster3 Lease 60m",
	)
	expectLines(t, render(t, table, true),
		"cluster2 False True (Progressing) Lease addontemplates/hello-0.0.2@99998888 (applied hello-0.0.1@1a2b3c4d), addondeploymentconfigs/cluster2/proxy@77776666 (not applied) 60m custom Available: the lease is 5m old",
		"cluster3 Lease 60m open-cluster-management-agent-addon",
	)
	expectLines(t, render(t, table, true)[:strings.Index(render(t, table, true), "\n")+1],
		"CLUSTER AVAILABLE DEGRADED PROGRESSING HEALTH CONFIGS AGE INSTALL NAMESPACE CONFIGURED MESSAGE")
}

func TestProgressionsTable(t *testing.T) {
	progressions := []addonv1alpha1.InstallProgression{
		{
			PlacementRef: addonv1alpha1.PlacementRef{Namespace: "apps", Name: "all"},
			ConfigReferences: []addonv1alpha1.InstallConfigReference{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addondeploymentconfigs"},
				DesiredConfig:       hash("apps", "proxy", "12345678abcd"), LastAppliedConfig: hash("apps", "proxy", "00000000ffff"),
			}},
			Conditions: []metav1.Condition{cond("Progressing", "True", "Progressing", "2/4 progressing..., 0 failed 0 timeout; cluster3 is skipped: Unknown")},
		},
		{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ops", Name: "edge"}},
	}
	expectLines(t, render(t, ProgressionsTable(progressions), false),
		"PLACEMENT PROGRESSING CONFIGS MESSAGE",
		"apps/all True (Progressing) addondeploymentconfigs/apps/proxy@12345678 (applied 00000000) 2/4 progressing..., 0 failed 0 timeout; cluster3 is skipped: Unknown",
		"ops/edge",
	)
}

func TestRemovalState(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []string
		conds      []metav1.Condition
		want       string
	}{
		{"no finalizer", nil, nil, "being deleted"},
		{"pre-delete hook", []string{addonv1alpha1.AddonPreDeleteHookFinalizer}, nil,
			"waiting for the pre-delete hook (finalizer addon.open-cluster-management.io/addon-pre-delete)"},
		{"pre-delete hook running", []string{"other", addonv1alpha1.AddonPreDeleteHookFinalizer},
			[]metav1.Condition{cond(addonv1alpha1.ManagedClusterAddOnHookManifestCompleted, "False", addonv1alpha1.HookManifestReasonNotCompleted, "")},
			"waiting for the pre-delete hook (finalizer addon.open-cluster-management.io/addon-pre-delete, HookManifestCompleted False (HookManifestIsNotCompleted))"},
		{"other finalizers", []string{"a", "b"}, nil, "held by finalizer(s) a,b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mca("cluster1", "hello", tt.conds...)
			m.Finalizers = tt.finalizers
			if got := removalState(&m); got != tt.want {
				t.Errorf("removalState = %q, want %q", got, tt.want)
			}
		})
	}
}
