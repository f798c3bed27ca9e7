package addon

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// shortHashLength is how many characters of a spec hash the tables show.
const shortHashLength = 8

// findCondition returns the condition of type typ, nil when absent.
func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	return meta.FindStatusCondition(conds, typ)
}

// conditionText describes c as its status with its reason, such as
// "False (ProbeUnavailable)".
func conditionText(c *metav1.Condition) string {
	if c.Reason == "" {
		return string(c.Status)
	}
	return string(c.Status) + " (" + c.Reason + ")"
}

// statusCell is the status of condition typ, "" when absent.
func statusCell(conds []metav1.Condition, typ string) string {
	if c := findCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return ""
}

// reasonCell is condition typ as conditionText describes it, "" when absent.
func reasonCell(conds []metav1.Condition, typ string) string {
	if c := findCondition(conds, typ); c != nil {
		return conditionText(c)
	}
	return ""
}

// shortHash is the first characters of a spec hash.
func shortHash(h string) string {
	if len(h) > shortHashLength {
		return h[:shortHashLength]
	}
	return h
}

// configState describes one configuration of resource: the desired object
// with its short spec hash and whether it is applied, such as
// "addondeploymentconfigs/cluster1/proxy@1a2b3c4d (applied 9f8e7d6c)".
// A configuration without desiredConfig is named by fallback.
func configState(resource string, fallback addonv1alpha1.ConfigReferent, desired, applied *addonv1alpha1.ConfigSpecHash) string {
	if desired == nil {
		return resource + "/" + refString(fallback) + " (not resolved)"
	}
	s := resource + "/" + refString(desired.ConfigReferent) + "@" + shortHash(desired.SpecHash)
	switch {
	case applied == nil:
		return s + " (not applied)"
	case applied.ConfigReferent != desired.ConfigReferent:
		return s + " (applied " + refString(applied.ConfigReferent) + "@" + shortHash(applied.SpecHash) + ")"
	case applied.SpecHash != desired.SpecHash:
		return s + " (applied " + shortHash(applied.SpecHash) + ")"
	}
	return s + " (applied)"
}

// mcaConfigs describes every configuration of mca (see configState), "" when none.
func mcaConfigs(mca *addonv1alpha1.ManagedClusterAddOn) string {
	states := make([]string, 0, len(mca.Status.ConfigReferences))
	for _, r := range mca.Status.ConfigReferences {
		states = append(states, configState(r.Resource, r.ConfigReferent, r.DesiredConfig, r.LastAppliedConfig))
	}
	return strings.Join(states, ", ")
}

// healthMode is how mca's health is checked: status.healthCheck.mode, whose
// default is Lease.
func healthMode(mca *addonv1alpha1.ManagedClusterAddOn) string {
	if mca.Status.HealthCheck.Mode == "" {
		return string(addonv1alpha1.HealthCheckModeLease)
	}
	return string(mca.Status.HealthCheck.Mode)
}

// attention is the message of the first condition of mca that says why it
// is not yet fine: Available not True, Degraded True, Progressing True or
// Failed, Configured False; "" when there is none.
func attention(mca *addonv1alpha1.ManagedClusterAddOn) string {
	conds := mca.Status.Conditions
	checks := []struct {
		typ     string
		trouble func(*metav1.Condition) bool
	}{
		{addonv1alpha1.ManagedClusterAddOnConditionAvailable, func(c *metav1.Condition) bool { return c.Status != metav1.ConditionTrue }},
		{addonv1alpha1.ManagedClusterAddOnConditionDegraded, func(c *metav1.Condition) bool { return c.Status == metav1.ConditionTrue }},
		{addonv1alpha1.ManagedClusterAddOnConditionProgressing, func(c *metav1.Condition) bool {
			return c.Status == metav1.ConditionTrue || c.Reason == addonv1alpha1.ProgressingReasonFailed
		}},
		{addonv1alpha1.ManagedClusterAddOnConditionConfigured, func(c *metav1.Condition) bool { return c.Status == metav1.ConditionFalse }},
	}
	for _, check := range checks {
		if c := findCondition(conds, check.typ); c != nil && c.Message != "" && check.trouble(c) {
			return c.Type + ": " + c.Message
		}
	}
	return ""
}

// installStrategy describes cma's install strategy: "Manual", or
// "Placements: NAMESPACE/NAME,...".
func installStrategy(cma *addonv1alpha1.ClusterManagementAddOn) string {
	s := cma.Spec.InstallStrategy
	if s.Type != addonv1alpha1.InstallStrategyPlacements {
		if s.Type == "" {
			return addonv1alpha1.InstallStrategyManual
		}
		return s.Type
	}
	if len(s.Placements) == 0 {
		return s.Type + ": none"
	}
	refs := make([]string, 0, len(s.Placements))
	for _, p := range s.Placements {
		refs = append(refs, p.Namespace+"/"+p.Name)
	}
	return s.Type + ": " + strings.Join(refs, ",")
}

// lifecycle says who manages cma's add-on: addon-manager (the hub's add-on
// manager) or the value of its lifecycle annotation, such as self.
func lifecycle(cma *addonv1alpha1.ClusterManagementAddOn) string {
	if addonv1alpha1.ManagedByAddonManager(cma.Annotations) {
		return addonv1alpha1.AddonLifecycleAddonManagerAnnotationValue
	}
	return cma.Annotations[addonv1alpha1.AddonLifecycleAnnotationKey]
}

// supportedConfigs describes cma's supported configuration kinds, each with
// its default configuration when it has one: "addontemplates/hello-0.0.1,
// addondeploymentconfigs".
func supportedConfigs(cma *addonv1alpha1.ClusterManagementAddOn) string {
	out := make([]string, 0, len(cma.Spec.SupportedConfigs))
	for _, s := range cma.Spec.SupportedConfigs {
		if s.DefaultConfig != nil {
			out = append(out, s.Resource+"/"+refString(*s.DefaultConfig))
		} else {
			out = append(out, s.Resource)
		}
	}
	return strings.Join(out, ", ")
}
