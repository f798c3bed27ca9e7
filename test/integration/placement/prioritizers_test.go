package placement

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// builtIn returns a prioritizer configuration of the built-in name.
func builtIn(name string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{Weight: weight, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
		Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name,
	}}
}

// addOn returns a prioritizer configuration of an add-on score.
func addOn(resource, score string, weight int32) clusterv1beta1.PrioritizerConfig {
	return clusterv1beta1.PrioritizerConfig{Weight: weight, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
		Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: resource, ScoreName: score},
	}}
}

// exact returns a spec selecting n clusters ranked by configs only.
func exact(n int32, configs ...clusterv1beta1.PrioritizerConfig) clusterv1beta1.PlacementSpec {
	return clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To(n), PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
		Mode: clusterv1beta1.PrioritizerPolicyModeExact, Configurations: configs,
	}}
}

// testPrioritizers checks the AddOn, ResourceAllocatableCPU, Balance and
// Steady prioritizers in Exact mode, negative weights, and rescheduling when
// an add-on score changes.
func testPrioritizers(ctx context.Context, t *testing.T, s *suite) {
	const ns = "prioritizers"
	s.fixture(ctx, t, ns)
	scores := map[string]int32{"prio-1": 10, "prio-2": 80, "prio-3": 50, "prio-4": 30}
	cpus := map[string]string{"prio-1": "2", "prio-2": "8", "prio-3": "4", "prio-4": "1"}
	for _, name := range names("prio", 1, 4) {
		s.createCluster(ctx, t, ns, clusterSpec{name: name, cpu: cpus[name]})
		s.score(ctx, t, name, "demo", "s", scores[name])
	}
	s.createPlacement(ctx, t, newPlacement(ns, "addon", exact(2, addOn("demo", "s", 1))))
	s.createPlacement(ctx, t, newPlacement(ns, "addon-negative", exact(1, addOn("demo", "s", -1))))
	s.createPlacement(ctx, t, newPlacement(ns, "cpu", exact(1, builtIn(clusterv1beta1.PrioritizerResourceAllocatableCPU, 1))))
	s.createPlacement(ctx, t, newPlacement(ns, "steady", exact(1, builtIn(clusterv1beta1.PrioritizerSteady, 2), addOn("demo", "s", 1))))
	s.waitDecided(ctx, t, ns, "addon", "prio-2", "prio-3")
	s.waitDecided(ctx, t, ns, "addon-negative", "prio-1")
	s.waitDecided(ctx, t, ns, "cpu", "prio-2")
	s.waitDecided(ctx, t, ns, "steady", "prio-2")

	// Other placements now decide prio-2 three times, prio-1 and prio-3
	// once: Balance prefers prio-4, in no decision.
	s.createPlacement(ctx, t, newPlacement(ns, "balance", exact(1, builtIn(clusterv1beta1.PrioritizerBalance, 1))))
	s.waitDecided(ctx, t, ns, "balance", "prio-4")

	// A score change reschedules the placements that read the score.
	s.score(ctx, t, "prio-1", "demo", "s", 100)
	s.waitDecided(ctx, t, ns, "addon", "prio-1", "prio-2")
	s.waitDecided(ctx, t, ns, "addon-negative", "prio-4")
	// Steady (weight 2) outweighs prio-1's 20 more points.
	s.waitDecided(ctx, t, ns, "steady", "prio-2")

	// An expired score counts 0: only the scheduler's requeue at validUntil
	// moves the placement.
	until := metav1.NewTime(time.Now().Add(8 * time.Second).Truncate(time.Second))
	s.scoreUntil(ctx, t, "prio-3", "expiring", "s", 90, &until)
	s.score(ctx, t, "prio-4", "expiring", "s", 20)
	s.createPlacement(ctx, t, newPlacement(ns, "expiring", exact(1, addOn("expiring", "s", 1))))
	if time.Now().Before(until.Time) {
		s.waitDecided(ctx, t, ns, "expiring", "prio-3")
	}
	s.waitDecided(ctx, t, ns, "expiring", "prio-4")
	if time.Now().Before(until.Time) {
		t.Errorf("the placement left prio-3 at %s, before its score expired at %s", time.Now(), until)
	}
}

// testModes checks that Additive mode keeps the default Balance and Steady
// weights while Exact mode uses only the configured prioritizers.
func testModes(ctx context.Context, t *testing.T, s *suite) {
	const ns = "modes"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "mode-a"})
	s.createCluster(ctx, t, ns, clusterSpec{name: "mode-b", labels: map[string]string{"pinned": "true"}})
	s.score(ctx, t, "mode-a", "modes", "s", 50)
	s.score(ctx, t, "mode-b", "modes", "s", 60)
	s.createPlacement(ctx, t, newPlacement(ns, "pinned", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		labelSelector(map[string]string{"pinned": "true"}),
	}}))
	s.waitDecided(ctx, t, ns, "pinned", "mode-b")

	// Exact: 60 beats 50.
	s.createPlacement(ctx, t, newPlacement(ns, "exact", exact(1, addOn("modes", "s", 1))))
	s.waitDecided(ctx, t, ns, "exact", "mode-b")
	// Additive: Balance (weight 1) adds 100 to mode-a, in no other
	// placement's decisions, and takes 100 from mode-b, in the most.
	additive := exact(1, addOn("modes", "s", 1))
	additive.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeAdditive
	s.createPlacement(ctx, t, newPlacement(ns, "additive", additive))
	s.waitDecided(ctx, t, ns, "additive", "mode-a")
}
