package placement

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// untouchedHold is how long a placement must keep its decisions to count as
// not rescheduled: the scheduler reacts to a cluster event in milliseconds.
const untouchedHold = 2 * time.Second

// testTargeted checks that a cluster label change reschedules the placement
// whose selector it enters and not a placement whose selector cannot match
// the cluster before or after the change, although both read labels.
//
// Whether a placement was rescheduled is made visible by the Balance
// prioritizer: "untouched" decides one of two equal clusters, then another
// placement, "crowd", comes to decide the same cluster. Balance now
// prefers the other one, but nothing reschedules "untouched" for that (a
// placement is rescheduled by its own decisions' changes, not by other
// placements'): its decisions move only when something else reschedules it.
func testTargeted(ctx context.Context, t *testing.T, s *suite) {
	const ns = "targeted"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "tgt-a", labels: map[string]string{"team": "u", "crowd": "yes"}})
	s.createCluster(ctx, t, ns, clusterSpec{name: "tgt-b", labels: map[string]string{"team": "u"}})
	s.createCluster(ctx, t, ns, clusterSpec{name: "tgt-c"})
	balance := clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact, Configurations: []clusterv1beta1.PrioritizerConfig{{
		Weight: 1, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: clusterv1beta1.PrioritizerBalance},
	}}}
	s.createPlacement(ctx, t, newPlacement(ns, "untouched", clusterv1beta1.PlacementSpec{
		NumberOfClusters:  ptr.To[int32](1),
		Predicates:        []clusterv1beta1.ClusterPredicate{labelSelector(map[string]string{"team": "u"})},
		PrioritizerPolicy: balance,
	}))
	s.createPlacement(ctx, t, newPlacement(ns, "selector", clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{labelSelector(map[string]string{"pick": "yes"})},
	}))
	// Equal Balance scores: the first by name.
	s.waitDecided(ctx, t, ns, "untouched", "tgt-a")
	s.waitDecided(ctx, t, ns, "selector")

	s.createPlacement(ctx, t, newPlacement(ns, "crowd", clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{labelSelector(map[string]string{"crowd": "yes"})},
	}))
	s.waitDecided(ctx, t, ns, "crowd", "tgt-a")
	before := s.holdDecided(ctx, t, ns, "untouched", "tgt-a", "before any cluster change")

	t.Log("a label change into the selector of one placement only")
	s.updateCluster(ctx, t, "tgt-c", func(mc *clusterv1.ManagedCluster) { mc.Labels["pick"] = "yes" })
	s.waitDecided(ctx, t, ns, "selector", "tgt-c")
	after := s.holdDecided(ctx, t, ns, "untouched", "tgt-a", "after the label change of tgt-c, which it cannot select")
	if before != after {
		t.Errorf("the PlacementDecision of untouched was rewritten (resourceVersion %s → %s)", before, after)
	}

	t.Log("a label change of a cluster it selects reschedules it, and Balance moves it")
	s.updateCluster(ctx, t, "tgt-b", func(mc *clusterv1.ManagedCluster) { mc.Labels["touched"] = "yes" })
	s.waitDecided(ctx, t, ns, "untouched", "tgt-b")
}

// holdDecided checks that placement ns/name decides exactly want for
// untouchedHold and returns the resourceVersion of its PlacementDecision.
func (s *suite) holdDecided(ctx context.Context, t *testing.T, ns, name string, want, when string) string {
	t.Helper()
	var rv string
	for end := time.Now().Add(untouchedHold); ; {
		items, err := s.decisions(ctx, ns, name)
		if err != nil {
			t.Fatalf("list the decisions of %s: %v", name, err)
		}
		got, err := s.decided(ctx, ns, name)
		if err != nil {
			t.Fatalf("list the decisions of %s: %v", name, err)
		}
		if !slices.Equal(got, []string{want}) {
			t.Fatalf("%s: placement %s decides %v, want [%s]: it was rescheduled", when, name, got, want)
		}
		if len(items) != 1 {
			t.Fatalf("%s: placement %s has %d PlacementDecisions", when, name, len(items))
		}
		rv = items[0].ResourceVersion
		if time.Now().After(end) {
			return rv
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
