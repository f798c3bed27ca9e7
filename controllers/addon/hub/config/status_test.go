package config

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

func TestWriteMCAStatus(t *testing.T) {
	cma := cmaWith()
	objects := map[addonconfig.Key]object{
		key(adc, "default-deploy-config"): {hash: "d"},
		key(adc, "missing"):               {problem: "addondeploymentconfigs.addon.open-cluster-management.io ocm/missing not found"},
		key(tmpl, "t1"):                   {hash: "t"},
	}
	tests := []struct {
		name     string
		configs  []addonv1alpha1.AddOnConfig
		status   metav1.ConditionStatus
		message  []string
		template bool
	}{
		{name: "configured", status: metav1.ConditionTrue, message: []string{configuredMessage}},
		{name: "template add-on", configs: []addonv1alpha1.AddOnConfig{ref(tmpl, "t1")}, status: metav1.ConditionTrue,
			message: []string{configuredMessage}, template: true},
		{name: "missing object and unsupported kind", configs: []addonv1alpha1.AddOnConfig{ref(adc, "missing"), ref(ex, "e1")},
			status: metav1.ConditionFalse, message: []string{
				"ocm/missing not found",
				"configuration kind exampleconfigs.example.open-cluster-management.io is not supported",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mca("c1")
			m.Spec.Configs = tt.configs
			p := makePlan(input{cma: cma, mcas: []addonv1alpha1.ManagedClusterAddOn{m}, objects: objects, now: now})
			writeMCAStatus(&m, cma, p.clusters[0], objects)
			switch {
			case tt.template && (len(m.Status.SupportedConfigs) != 2 || m.Status.SupportedConfigs[0] != adc):
				t.Errorf("supportedConfigs = %v, want the AddOnDeploymentConfigs and the other built-in kind", m.Status.SupportedConfigs)
			case !tt.template && len(m.Status.SupportedConfigs) > 0:
				t.Errorf("supportedConfigs = %v of an add-on the hub does not deploy: they are its own manager's", m.Status.SupportedConfigs)
			}
			if want := max(1, len(tt.configs)) + btoi(tt.template); len(m.Status.ConfigReferences) != want {
				t.Errorf("configReferences = %+v: every configuration must be listed", m.Status.ConfigReferences)
			}
			c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured)
			if c == nil || c.Status != tt.status {
				t.Fatalf("Configured = %+v, want status %s", c, tt.status)
			}
			for _, part := range tt.message {
				if !strings.Contains(c.Message, part) {
					t.Errorf("Configured message %q does not say %q", c.Message, part)
				}
			}
		})
	}
}

func TestProgressing(t *testing.T) {
	objects := map[addonconfig.Key]object{key(adc, "default-deploy-config"): {hash: "d"}, key(adc, "v2"): {hash: "h2"}}
	done := running("v2", "h2", true, addonv1alpha1.ProgressingReasonCompleted, time.Hour)
	failed := running("v2", "h2", false, addonv1alpha1.ProgressingReasonFailed, time.Minute)
	busy := running("v2", "h2", false, addonv1alpha1.ProgressingReasonProgressing, time.Minute)
	tests := []struct {
		name      string
		decisions lookup.Decisions
		strategy  clusterv1alpha1.RolloutStrategy
		mcas      []addonv1alpha1.ManagedClusterAddOn
		available map[string]bool
		reason    string
		message   []string
	}{
		{name: "missing placement", reason: ReasonPlacementNotFound, message: []string{"Placement default/p not found"}},
		{name: "no cluster", decisions: decided(), reason: addonv1alpha1.ProgressingReasonProgressing,
			message: []string{"selected clusters 0. configured addons 0/0 progressing..., 0 failed 0 timeout."}},
		{name: "completed", decisions: decided([]string{"c1", "c2"}), mcas: []addonv1alpha1.ManagedClusterAddOn{mca("c1", done), mca("c2", done)},
			available: map[string]bool{"c1": true, "c2": true}, reason: addonv1alpha1.ProgressingReasonCompleted,
			message: []string{"selected clusters 2. configured addons 2/2 completed with no errors, 0 failed 0 timeout."}},
		{name: "waiting for a cluster", decisions: decided([]string{"c1", "c2"}), strategy: progressive(1),
			mcas: []addonv1alpha1.ManagedClusterAddOn{mca("c1", busy), mca("c2")}, available: map[string]bool{"c1": true, "c2": true},
			reason:  addonv1alpha1.ProgressingReasonProgressing,
			message: []string{"selected clusters 2. configured addons 1/2 progressing..., 0 failed 0 timeout.", "Waiting for c1 (Progressing)."}},
		{name: "stopped by a failure, skipping an unavailable cluster", decisions: decided([]string{"c1"}, []string{"c2", "c3"}), strategy: progressive(1, "canary"),
			mcas: []addonv1alpha1.ManagedClusterAddOn{mca("c1", failed), mca("c2"), mca("c3")}, available: map[string]bool{"c1": true, "c2": true},
			reason: addonv1alpha1.ProgressingReasonProgressing,
			message: []string{"configured addons 0/2 progressing..., 1 failed 0 timeout.", "The rollout stopped: too many clusters failed (c1)",
				"Skipped clusters (gone, not available or removing the add-on): c3."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cma := cmaWith(placementStrategy("p", tt.strategy, ref(adc, "v2")))
			p := makePlan(input{cma: cma, decisions: []lookup.Decisions{tt.decisions}, mcas: tt.mcas, objects: objects, available: tt.available, now: now})
			writeCMAStatus(cma, p, objects)
			if d := cma.Status.DefaultConfigReferences; len(d) != 1 || d[0].DesiredConfig.SpecHash != "d" {
				t.Errorf("defaultconfigReferences = %+v, want default-deploy-config with its hash", d)
			}
			ip := cma.Status.InstallProgressions
			if len(ip) != 1 || len(ip[0].ConfigReferences) != 1 || ip[0].ConfigReferences[0].DesiredConfig.SpecHash != "h2" {
				t.Fatalf("installProgressions = %+v, want the placement's deploy config with its hash", ip)
			}
			c := meta.FindStatusCondition(ip[0].Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
			if c == nil || c.Reason != tt.reason {
				t.Fatalf("Progressing = %+v, want reason %s", c, tt.reason)
			}
			for _, part := range tt.message {
				if !strings.Contains(c.Message, part) {
					t.Errorf("message %q does not say %q", c.Message, part)
				}
			}
			completed := tt.reason == addonv1alpha1.ProgressingReasonCompleted
			if got := ip[0].ConfigReferences[0].LastAppliedConfig != nil; got != completed {
				t.Errorf("lastAppliedConfig set = %v, want %v", got, completed)
			}
		})
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
