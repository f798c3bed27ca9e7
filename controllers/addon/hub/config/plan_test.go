package config

import (
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

func TestStateOf(t *testing.T) {
	target := targetRefs([]addonconfig.Resolved{{Key: key(adc, "v2"), Supported: true}},
		map[addonconfig.Key]object{key(adc, "v2"): {hash: "h2"}})
	tests := []struct {
		name  string
		mca   addonv1alpha1.ManagedClusterAddOn
		state rollout.State
		since time.Time
	}{
		{name: "no configurations yet", mca: mca("c1"), state: rollout.ToApply},
		{name: "older configurations", mca: mca("c1", running("v1", "h1", true, addonv1alpha1.ProgressingReasonCompleted, time.Hour)), state: rollout.ToApply},
		{name: "same object, other spec", mca: mca("c1", running("v2", "h1", true, addonv1alpha1.ProgressingReasonCompleted, time.Hour)), state: rollout.ToApply},
		{name: "applied", mca: mca("c1", running("v2", "h2", true, addonv1alpha1.ProgressingReasonCompleted, time.Minute)),
			state: rollout.Succeeded, since: now.Add(-time.Minute)},
		{name: "applied without a condition", mca: func() addonv1alpha1.ManagedClusterAddOn {
			m := mca("c1", running("v2", "h2", true, "", 0))
			m.Status.Conditions = nil
			return m
		}(), state: rollout.Succeeded, since: now.Add(-time.Hour)},
		{name: "progressing", mca: mca("c1", running("v2", "h2", false, addonv1alpha1.ProgressingReasonProgressing, time.Minute)),
			state: rollout.Progressing, since: now.Add(-time.Minute)},
		{name: "completed condition left from before starts the clock now", mca: mca("c1", running("v2", "h2", false, addonv1alpha1.ProgressingReasonCompleted, time.Hour)),
			state: rollout.Progressing},
		{name: "failed", mca: mca("c1", running("v2", "h2", false, addonv1alpha1.ProgressingReasonFailed, time.Minute)),
			state: rollout.Failed, since: now.Add(-time.Minute)},
		{name: "unsupported", mca: mca("c1", running("v2", "h2", false, addonv1alpha1.ProgressingReasonConfigurationUnsupported, time.Minute)),
			state: rollout.Failed, since: now.Add(-time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stateOf(&tt.mca, target)
			if got.State != tt.state || !got.Since.Equal(tt.since) {
				t.Errorf("stateOf() = %s since %v, want %s since %v", got.State, got.Since, tt.state, tt.since)
			}
		})
	}
}

func TestMergeRefs(t *testing.T) {
	current := mca("c1", running("v1", "h1", true, addonv1alpha1.ProgressingReasonCompleted, time.Hour)).Status.ConfigReferences
	target := targetRefs([]addonconfig.Resolved{{Key: key(adc, "v2"), Supported: true}, {Key: key(ex, "e1")}},
		map[addonconfig.Key]object{key(adc, "v2"): {hash: "h2", generation: 3}})
	held := mergeRefs(current, target, false)
	if !reflect.DeepEqual(held, current) {
		t.Errorf("not allowed: got %+v, want the current references", held)
	}
	got := mergeRefs(current, target, true)
	if len(got) != 2 || !reflect.DeepEqual(got[0].DesiredConfig, hashed("v2", "h2")) || got[0].LastObservedGeneration != 3 { //nolint:staticcheck // the deprecated field is still written
		t.Fatalf("allowed: got %+v, want the target", got)
	}
	if !reflect.DeepEqual(got[0].LastAppliedConfig, hashed("v1", "h1")) {
		t.Errorf("lastAppliedConfig = %+v, want the one of the same kind kept", got[0].LastAppliedConfig)
	}
	if got[1].LastAppliedConfig != nil || got[1].DesiredConfig.SpecHash != "" {
		t.Errorf("new kind: got %+v, want no lastAppliedConfig and no hash (object not read)", got[1])
	}
}

// allowedClusters returns the sorted clusters a plan lets take their target.
func allowedClusters(p plan) []string {
	out := []string{}
	for _, cp := range p.clusters {
		if cp.allowed {
			out = append(out, cp.mca.Namespace)
		}
	}
	sort.Strings(out)
	return out
}

func TestMakePlan(t *testing.T) {
	objects := map[addonconfig.Key]object{key(adc, "default-deploy-config"): {hash: "d"}, key(adc, "v1"): {hash: "h1"}, key(adc, "v2"): {hash: "h2"}}
	done := func(name, hash string) mcaOpt {
		return running(name, hash, true, addonv1alpha1.ProgressingReasonCompleted, time.Hour)
	}
	busy := func(name, hash string) mcaOpt {
		return running(name, hash, false, addonv1alpha1.ProgressingReasonProgressing, time.Minute)
	}
	broken := func(name, hash string) mcaOpt {
		return running(name, hash, false, addonv1alpha1.ProgressingReasonFailed, time.Minute)
	}
	all := map[string]bool{"c1": true, "c2": true, "c3": true, "c4": true, "m1": true}
	tests := []struct {
		name      string
		cma       *addonv1alpha1.ClusterManagementAddOn
		decisions []lookup.Decisions
		mcas      []addonv1alpha1.ManagedClusterAddOn
		available map[string]bool
		allowed   []string
		skipped   []string
	}{
		{name: "clusters of no placement take new configurations at once", cma: cmaWith(),
			mcas: []addonv1alpha1.ManagedClusterAddOn{mca("m1"), mca("c1", done("v1", "h1"))}, available: map[string]bool{},
			allowed: []string{"c1", "m1"}},
		{name: "progressive: canary group first, one at a time", cma: cmaWith(placementStrategy("p", progressive(1, "canary"), ref(adc, "v2"))),
			decisions: []lookup.Decisions{decided([]string{"c1", "c2"}, []string{"c3", "c4"})},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", done("v1", "h1")), mca("c2", done("v1", "h1")), mca("c3", done("v1", "h1")), mca("c4")},
			available: all, allowed: []string{"c1", "c2"}},
		{name: "progressive: the rest once the canary succeeded", cma: cmaWith(placementStrategy("p", progressive(1, "canary"), ref(adc, "v2"))),
			decisions: []lookup.Decisions{decided([]string{"c1", "c2"}, []string{"c3", "c4"})},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", done("v2", "h2")), mca("c2", done("v2", "h2")), mca("c3", done("v1", "h1")), mca("c4")},
			available: all, allowed: []string{"c3"}},
		{name: "progressive: a failed canary stops the rollout", cma: cmaWith(placementStrategy("p", progressive(1, "canary"), ref(adc, "v2"))),
			decisions: []lookup.Decisions{decided([]string{"c1", "c2"}, []string{"c3"})},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", broken("v2", "h2")), mca("c2", done("v2", "h2")), mca("c3", done("v1", "h1"))},
			available: all, allowed: []string{}},
		{name: "progressive: an unavailable cluster is skipped, not waited for", cma: cmaWith(placementStrategy("p", progressive(1), ref(adc, "v2"))),
			decisions: []lookup.Decisions{decided([]string{"c1", "c2", "c3"})},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", busy("v2", "h2")), mca("c2", done("v1", "h1")), mca("c3", done("v1", "h1"))},
			available: map[string]bool{"c2": true, "c3": true}, allowed: []string{"c2"}, skipped: []string{"c1"}},
		{name: "the later placement owns a cluster decided by both", cma: cmaWith(
			placementStrategy("first", progressive(1), ref(adc, "v1")), placementStrategy("second", clusterv1alpha1.RolloutStrategy{}, ref(adc, "v2"))),
			decisions: []lookup.Decisions{decided([]string{"c1", "c2"}), decided([]string{"c2"})},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", busy("v1", "h1")), mca("c2", busy("v1", "h1"))},
			available: all, allowed: []string{"c2"}},
		{name: "a missing placement decides nothing", cma: cmaWith(placementStrategy("p", progressive(1), ref(adc, "v2"))),
			decisions: []lookup.Decisions{{}},
			mcas:      []addonv1alpha1.ManagedClusterAddOn{mca("c1", done("v1", "h1"))},
			available: all, allowed: []string{"c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := makePlan(input{cma: tt.cma, decisions: tt.decisions, mcas: tt.mcas, objects: objects, available: tt.available, now: now})
			if got := allowedClusters(p); !reflect.DeepEqual(got, tt.allowed) {
				t.Errorf("allowed = %v, want %v", got, tt.allowed)
			}
			var skipped []string
			for _, pp := range p.placements {
				if pp.err != nil {
					t.Fatalf("rollout of %s: %v", pp.strategy.Name, pp.err)
				}
				skipped = append(skipped, pp.skipped...)
			}
			if !reflect.DeepEqual(skipped, tt.skipped) {
				t.Errorf("skipped = %v, want %v", skipped, tt.skipped)
			}
		})
	}
}
