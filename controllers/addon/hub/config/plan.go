package config

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

// input is everything a plan depends on, read from the cache.
type input struct {
	cma *addonv1alpha1.ClusterManagementAddOn
	// decisions are those of cma's install strategy placements, in order.
	decisions []lookup.Decisions
	// mcas are the add-on's ManagedClusterAddOns.
	mcas []addonv1alpha1.ManagedClusterAddOn
	// objects are the configuration objects read.
	objects map[addonconfig.Key]object
	// available holds the clusters whose ManagedCluster exists and is Available.
	available map[string]bool
	now       time.Time
}

// clusterPlan is what the plan decided for one ManagedClusterAddOn.
type clusterPlan struct {
	mca *addonv1alpha1.ManagedClusterAddOn
	// placement is the index of the install placement whose rollout the
	// cluster follows (the last one deciding it), -1 for none: such clusters
	// take new configurations at once.
	placement int
	// resolved are the cluster's configurations.
	resolved []addonconfig.Resolved
	// target are the configuration references the cluster should have.
	target []addonv1alpha1.ConfigReference
	// state is the cluster's rollout state.
	state rollout.ClusterState
	// allowed reports that the cluster takes target now.
	allowed bool
}

// placementPlan is the rollout over the clusters of one install placement.
type placementPlan struct {
	strategy addonv1alpha1.PlacementStrategy
	found    bool
	// selected counts the clusters the placement decides.
	selected int
	// clusters are the ManagedClusterAddOns following this rollout.
	clusters []*clusterPlan
	// skipped are the clusters left out: gone, not available, or whose
	// ManagedClusterAddOn is being deleted.
	skipped []string
	result  rollout.Result
	err     error
}

// plan is the outcome of one reconcile of an add-on's configurations.
type plan struct {
	clusters   []*clusterPlan
	placements []*placementPlan
	// requeueAfter is when the rollout changes by the clock alone.
	requeueAfter time.Duration
}

// makePlan resolves the configurations of every ManagedClusterAddOn and
// runs each placement's rollout.
func makePlan(in input) plan {
	var p plan
	owner := map[string]int{}
	configs := map[string][][]addonv1alpha1.AddOnConfig{}
	for i, strategy := range in.cma.Spec.InstallStrategy.Placements {
		pp := &placementPlan{strategy: strategy}
		if i < len(in.decisions) {
			pp.found = in.decisions[i].Found
			for _, c := range in.decisions[i].Clusters() {
				pp.selected++
				owner[c] = i
				configs[c] = append(configs[c], strategy.Configs)
			}
		}
		p.placements = append(p.placements, pp)
	}
	byCluster := map[string]*clusterPlan{}
	for i := range in.mcas {
		mca := &in.mcas[i]
		cp := &clusterPlan{mca: mca, placement: -1}
		if o, ok := owner[mca.Namespace]; ok {
			cp.placement = o
		}
		cp.resolved = addonconfig.Resolve(in.cma, configs[mca.Namespace], mca)
		cp.target = targetRefs(cp.resolved, in.objects)
		cp.state = stateOf(mca, cp.target)
		byCluster[mca.Namespace] = cp
		p.clusters = append(p.clusters, cp)
		if cp.placement < 0 {
			// Clusters of no placement (a Manual add-on) take new
			// configurations at once.
			cp.allowed = cp.state.State == rollout.ToApply && mca.DeletionTimestamp.IsZero()
		}
	}
	for i, pp := range p.placements {
		if i < len(in.decisions) {
			p.rollOut(pp, i, in.decisions[i], byCluster, in)
		}
	}
	return p
}

// rollOut runs the rollout of placement index over the clusters it owns.
func (p *plan) rollOut(pp *placementPlan, index int, d lookup.Decisions, byCluster map[string]*clusterPlan, in input) {
	states := map[string]rollout.ClusterState{}
	var groups []rollout.Group
	for _, g := range d.Groups {
		kept := rollout.Group{Index: g.Index, Name: g.Name}
		for _, c := range g.Clusters {
			cp := byCluster[c]
			if cp == nil || cp.placement != index {
				continue
			}
			pp.clusters = append(pp.clusters, cp)
			kept.Clusters = append(kept.Clusters, c)
			states[c] = cp.state
			if !in.available[c] || !cp.mca.DeletionTimestamp.IsZero() {
				states[c] = rollout.ClusterState{State: rollout.Skip}
				pp.skipped = append(pp.skipped, c)
			}
		}
		groups = append(groups, kept)
	}
	pp.result, pp.err = rollout.Compute(rollout.Input{Strategy: pp.strategy.RolloutStrategy, Groups: groups, States: states, Now: in.now})
	if pp.err != nil {
		return
	}
	for _, c := range pp.result.Pending() {
		byCluster[c.Name].allowed = true
	}
	if d := pp.result.RequeueAfter; d > 0 && (p.requeueAfter == 0 || d < p.requeueAfter) {
		p.requeueAfter = d
	}
}

// targetRefs turns resolved configurations into configuration references
// with the spec hashes of objects (empty for an object that could not be
// read).
func targetRefs(resolved []addonconfig.Resolved, objects map[addonconfig.Key]object) []addonv1alpha1.ConfigReference {
	out := make([]addonv1alpha1.ConfigReference, 0, len(resolved))
	for _, r := range resolved {
		o := objects[r.Key]
		out = append(out, addonv1alpha1.ConfigReference{
			ConfigGroupResource:    r.ConfigGroupResource,
			ConfigReferent:         r.ConfigReferent,
			LastObservedGeneration: o.generation, //nolint:staticcheck // OCM still writes the deprecated field for readers of v1alpha1.
			DesiredConfig:          &addonv1alpha1.ConfigSpecHash{ConfigReferent: r.ConfigReferent, SpecHash: o.hash},
		})
	}
	return out
}

// hashesOf returns the desired configurations of refs, as config.Desired
// returns those of a ManagedClusterAddOn.
func hashesOf(refs []addonv1alpha1.ConfigReference) addonconfig.Hashes {
	return addonconfig.Desired(&addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: refs}})
}

// stateOf is the rollout state of mca when it should have target, from its
// status (docs/design/addons.md): ToApply until its desired configurations
// are target; then Succeeded once every lastAppliedConfig is its
// desiredConfig, Failed when Progressing says Failed or
// ConfigurationUnsupported, Progressing otherwise. Since is the last
// transition of Progressing, except for a Progressing condition left from
// before target (then the clock starts now) and a Succeeded cluster without
// one (then it is the ManagedClusterAddOn's creation).
func stateOf(mca *addonv1alpha1.ManagedClusterAddOn, target []addonv1alpha1.ConfigReference) rollout.ClusterState {
	refs := mca.Status.ConfigReferences
	if len(refs) != len(target) || !addonconfig.Desired(mca).Equal(hashesOf(target)) {
		return rollout.ClusterState{State: rollout.ToApply}
	}
	cond := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
	since := func(reasons ...string) time.Time {
		for _, r := range reasons {
			if cond != nil && cond.Reason == r {
				return cond.LastTransitionTime.Time
			}
		}
		return time.Time{}
	}
	applied := true
	for _, ref := range refs {
		applied = applied && ref.LastAppliedConfig != nil && equality.Semantic.DeepEqual(ref.LastAppliedConfig, ref.DesiredConfig)
	}
	switch {
	case applied:
		s := since(addonv1alpha1.ProgressingReasonCompleted)
		if s.IsZero() {
			s = mca.CreationTimestamp.Time
		}
		return rollout.ClusterState{State: rollout.Succeeded, Since: s}
	case cond != nil && (cond.Reason == addonv1alpha1.ProgressingReasonFailed || cond.Reason == addonv1alpha1.ProgressingReasonConfigurationUnsupported):
		return rollout.ClusterState{State: rollout.Failed, Since: since(cond.Reason)}
	default:
		return rollout.ClusterState{State: rollout.Progressing, Since: since(addonv1alpha1.ProgressingReasonProgressing)}
	}
}

// mergeRefs returns the configuration references mca should carry now: its
// current ones when it may not take target yet; otherwise target, each
// keeping the lastAppliedConfig of the current reference of the same kind
// (what the deployed agent still runs until the rollout controller records
// otherwise).
func mergeRefs(current, target []addonv1alpha1.ConfigReference, allowed bool) []addonv1alpha1.ConfigReference {
	if !allowed && !hashesOf(current).Equal(hashesOf(target)) {
		return current
	}
	used := make([]bool, len(current))
	out := make([]addonv1alpha1.ConfigReference, 0, len(target))
	for _, t := range target {
		ref := *t.DeepCopy()
		for i, c := range current {
			if !used[i] && c.ConfigGroupResource == t.ConfigGroupResource {
				used[i] = true
				ref.LastAppliedConfig = c.LastAppliedConfig.DeepCopy()
				break
			}
		}
		out = append(out, ref)
	}
	return out
}
