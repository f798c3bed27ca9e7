package config

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/text"
)

// Reasons of an install progression's Progressing condition besides OCM's
// Progressing and Completed.
const (
	// ReasonPlacementNotFound: the install placement does not exist; it is
	// skipped and installs nothing.
	ReasonPlacementNotFound = "PlacementNotFound"
	// ReasonInvalidRolloutStrategy: the placement's rollout strategy cannot
	// be used; no cluster of it takes new configurations.
	ReasonInvalidRolloutStrategy = "InvalidRolloutStrategy"
)

// configuredMessage is OCM's message of Configured True.
const configuredMessage = "Configurations configured"

// maxNamed is how many clusters a message names before it counts the rest.
const maxNamed = 5

// writeMCAStatus sets the status fields the controller owns on mca (a copy
// of cp.mca): configReferences and Configured, as OCM's add-on manager
// does, and supportedConfigs of a template add-on, which the hub deploys.
// The supportedConfigs of any other add-on are its own manager's to write
// (addon-framework writes the kinds its add-on reads): writing them too
// would undo each other's writes without end.
func writeMCAStatus(mca *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn, cp *clusterPlan, objects map[addonconfig.Key]object) {
	if isTemplate(cp.resolved) {
		mca.Status.SupportedConfigs = addonconfig.SupportedKinds(cma)
	}
	mca.Status.ConfigReferences = mergeRefs(mca.Status.ConfigReferences, cp.target, cp.allowed)
	cond := metav1.Condition{
		Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue,
		Reason: addonv1alpha1.ConfiguredReasonConfigured, Message: configuredMessage, ObservedGeneration: mca.Generation,
	}
	if problems := problemsOf(cma, cp.resolved, objects); len(problems) > 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, addonv1alpha1.ConfiguredReasonNotConfigured, strings.Join(problems, "; ")
	}
	meta.SetStatusCondition(&mca.Status.Conditions, cond)
}

// isTemplate reports whether resolved configurations include an
// AddOnTemplate: the hub deploys the add-on.
func isTemplate(resolved []addonconfig.Resolved) bool {
	for _, r := range resolved {
		if r.Group == addonv1alpha1.GroupVersion.Group && r.Resource == addonv1alpha1.AddOnTemplateResource {
			return true
		}
	}
	return false
}

// problemsOf lists what is wrong with a cluster's configurations: kinds the
// add-on does not support, objects that could not be read.
func problemsOf(cma *addonv1alpha1.ClusterManagementAddOn, resolved []addonconfig.Resolved, objects map[addonconfig.Key]object) []string {
	var out []string
	seen := map[addonv1alpha1.ConfigGroupResource]bool{}
	for _, r := range resolved {
		if !r.Supported && !seen[r.ConfigGroupResource] {
			seen[r.ConfigGroupResource] = true
			out = append(out, fmt.Sprintf("configuration kind %s is not supported: it is neither built in nor in the supportedConfigs of ClusterManagementAddOn %s",
				lookup.KindName(r.ConfigGroupResource), cma.Name))
		}
		if p := objects[r.Key].problem; p != "" {
			out = append(out, p)
		}
	}
	return out
}

// writeCMAStatus sets the status of cma: its default configurations with
// their hashes and the install progression of each placement.
func writeCMAStatus(cma *addonv1alpha1.ClusterManagementAddOn, p plan, objects map[addonconfig.Key]object) {
	var defaults []addonv1alpha1.DefaultConfigReference
	for _, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig == nil {
			continue
		}
		key := addonconfig.Key{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig}
		defaults = append(defaults, addonv1alpha1.DefaultConfigReference{
			ConfigGroupResource: sc.ConfigGroupResource,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: *sc.DefaultConfig, SpecHash: objects[key].hash},
		})
	}
	cma.Status.DefaultConfigReferences = defaults

	previous := map[addonv1alpha1.PlacementRef]addonv1alpha1.InstallProgression{}
	for _, ip := range cma.Status.InstallProgressions {
		previous[ip.PlacementRef] = ip
	}
	var progressions []addonv1alpha1.InstallProgression
	for _, pp := range p.placements {
		old := previous[pp.strategy.PlacementRef]
		ip := addonv1alpha1.InstallProgression{PlacementRef: pp.strategy.PlacementRef, Conditions: old.Conditions}
		ip.ConfigReferences = installRefs(cma, pp.strategy, old.ConfigReferences, objects)
		cond := progressing(pp)
		if cond.Reason == addonv1alpha1.ProgressingReasonCompleted {
			for i := range ip.ConfigReferences {
				ref := &ip.ConfigReferences[i]
				ref.LastAppliedConfig, ref.LastKnownGoodConfig = ref.DesiredConfig.DeepCopy(), ref.DesiredConfig.DeepCopy()
			}
		}
		cond.ObservedGeneration = cma.Generation
		meta.SetStatusCondition(&ip.Conditions, cond)
		progressions = append(progressions, ip)
	}
	cma.Status.InstallProgressions = progressions
}

// installRefs are the configurations of a placement before any cluster's
// own: the defaults overridden by the placement's configs, with their
// hashes, keeping the last applied and last known good configurations of
// previous of the same kind and object.
func installRefs(cma *addonv1alpha1.ClusterManagementAddOn, strategy addonv1alpha1.PlacementStrategy,
	previous []addonv1alpha1.InstallConfigReference, objects map[addonconfig.Key]object) []addonv1alpha1.InstallConfigReference {
	var out []addonv1alpha1.InstallConfigReference
	for _, r := range addonconfig.Resolve(cma, [][]addonv1alpha1.AddOnConfig{strategy.Configs}, nil) {
		ref := addonv1alpha1.InstallConfigReference{
			ConfigGroupResource: r.ConfigGroupResource,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: r.ConfigReferent, SpecHash: objects[r.Key].hash},
		}
		for _, old := range previous {
			if old.ConfigGroupResource == r.ConfigGroupResource && old.DesiredConfig != nil && old.DesiredConfig.ConfigReferent == r.ConfigReferent {
				ref.LastAppliedConfig, ref.LastKnownGoodConfig = old.LastAppliedConfig.DeepCopy(), old.LastKnownGoodConfig.DeepCopy()
			}
		}
		out = append(out, ref)
	}
	return out
}

// progressing is the Progressing condition of a placement's install
// progression, with OCM's counts ("selected clusters N. configured addons
// x/y ...") followed by what holds the rollout up and which clusters it
// skips.
func progressing(pp *placementPlan) metav1.Condition {
	ref := pp.strategy.Namespace + "/" + pp.strategy.Name
	cond := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: metav1.ConditionFalse}
	switch {
	case !pp.found:
		cond.Reason = ReasonPlacementNotFound
		cond.Message = fmt.Sprintf("Placement %s not found: it is skipped until it is created or removed from spec.installStrategy.placements.", ref)
		return cond
	case pp.err != nil:
		cond.Reason = ReasonInvalidRolloutStrategy
		cond.Message = fmt.Sprintf("The rollout strategy of placement %s is invalid: %v. No cluster of it takes new configurations until it is fixed.", ref, pp.err)
		return cond
	}
	c := countStates(pp)
	if c.configured == 0 && c.done == 0 || !pp.result.Complete {
		cond.Status, cond.Reason = metav1.ConditionTrue, addonv1alpha1.ProgressingReasonProgressing
		cond.Message = fmt.Sprintf("selected clusters %d. configured addons %d/%d progressing..., %d failed %d timeout.",
			pp.selected, c.progressing+c.done, c.configured, c.failed, c.timeout)
		if holder := holdup(pp); holder != "" {
			cond.Message += " " + holder
		}
	} else {
		cond.Reason = addonv1alpha1.ProgressingReasonCompleted
		cond.Message = fmt.Sprintf("selected clusters %d. configured addons %d/%d completed with no errors, %d failed %d timeout.",
			pp.selected, c.done, c.configured, c.failed, c.timeout)
	}
	if len(pp.skipped) > 0 {
		cond.Message += fmt.Sprintf(" Skipped clusters (gone, not available or removing the add-on): %s.", names(pp.skipped))
	}
	return cond
}

// counts are the clusters of a placement by rollout state.
type counts struct {
	configured, progressing, done, failed, timeout int
}

// countStates counts the clusters of pp that take part in its rollout.
func countStates(pp *placementPlan) counts {
	var c counts
	skipped := map[string]bool{}
	for _, s := range pp.skipped {
		skipped[s] = true
	}
	timedOut := map[string]bool{}
	for _, t := range pp.result.TimedOut {
		timedOut[t.Name] = true
	}
	c.timeout = len(timedOut)
	for _, cp := range pp.clusters {
		name := cp.mca.Namespace
		if skipped[name] {
			continue
		}
		c.configured++
		switch {
		case timedOut[name]:
		case cp.state.State == rollout.Progressing:
			c.progressing++
		case cp.state.State == rollout.Succeeded:
			c.done++
		case cp.state.State == rollout.Failed:
			c.failed++
		}
	}
	return c
}

// holdup names the clusters an incomplete rollout waits for: those in its
// window that have not succeeded (or are soaking), or, when it stopped, the
// failed ones.
func holdup(pp *placementPlan) string {
	var waiting []string
	for _, c := range pp.result.ToApply {
		if c.State != rollout.ToApply {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", c.Name, c.State))
		}
	}
	if pp.result.MaxFailuresBreached {
		var failed []string
		for _, cp := range pp.clusters {
			if cp.state.State == rollout.Failed {
				failed = append(failed, cp.mca.Namespace)
			}
		}
		for _, t := range pp.result.TimedOut {
			failed = append(failed, t.Name)
		}
		return fmt.Sprintf("The rollout stopped: too many clusters failed (%s); it resumes when they are mended.", names(failed))
	}
	if len(waiting) == 0 {
		return ""
	}
	return fmt.Sprintf("Waiting for %s.", names(waiting))
}

// names joins up to maxNamed sorted names, once each, and counts the others.
func names(in []string) string {
	return text.JoinLimited(slices.Compact(slices.Sorted(slices.Values(in))), ", ", maxNamed)
}
