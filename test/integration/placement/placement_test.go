package placement

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// TestPlacementScheduler runs the placement scheduler as its ServiceAccount
// on one real hub and checks every scheduling rule. The subtests run in
// parallel, each in its own namespace with its own cluster set.
func TestPlacementScheduler(t *testing.T) {
	framework.SkipIfShort(t)
	s, ctx := setup(t)
	for _, tc := range []struct {
		name string
		run  func(context.Context, *testing.T, *suite)
	}{
		{"predicates", testPredicates},
		{"misconfigured CEL", testMisconfigured},
		{"taints and tolerations", testTaints},
		{"prioritizers", testPrioritizers},
		{"prioritizer modes", testModes},
		{"numberOfClusters and conditions", testCount},
		{"decision groups", testGroups},
		{"paging past 100", testPaging},
		{"spread", testSpread},
		{"rescheduling", testReschedule},
		{"cluster events reschedule only the placements they can affect", testTargeted},
		{"CEL selectors reschedule on what they read", testCELReschedule},
		{"scheduling disabled", testDisabled},
		{"seed 001-installstrategy-placements", testSeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(ctx, t, s)
		})
	}
}

// seedFile is the seed example whose Placement selects the clusters with the
// aws platform claim.
const seedFile = "001-installstrategy-placements.yaml"

// testSeed applies the seed as it is and checks that its placement selects
// exactly the clusters with the aws platform claim.
func testSeed(ctx context.Context, t *testing.T, s *suite) {
	data := seeds.Data(t, seedFile)
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode the seed: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	// The seed's placement is in namespace default and uses every set bound
	// there: bind one.
	const set = "seed"
	kit.Must(t, "create set", s.admin.Create(ctx, newSet(set)))
	s.bind(ctx, t, "default", set)
	for _, c := range []clusterSpec{
		{name: "seed-aws-1", claims: map[string]string{platformClaim: "aws"}},
		{name: "seed-aws-2", claims: map[string]string{platformClaim: "aws", "region": "us-east-1"}},
		{name: "seed-gcp", claims: map[string]string{platformClaim: "gcp"}},
		{name: "seed-aws-label", labels: map[string]string{platformClaim: "aws"}},
		{name: "seed-none"},
	} {
		s.createCluster(ctx, t, set, c)
	}
	kit.Must(t, "apply the seed", apply.Apply(ctx, s.admin, objs, apply.Options{}))
	s.waitDecided(ctx, t, "default", "placement-aws", "seed-aws-1", "seed-aws-2")
}
