package placement

import (
	"reflect"
	"slices"
	"testing"
	"time"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// FuzzCELPredicate schedules a placement whose predicate is an arbitrary CEL
// expression over clusters with arbitrary label values: it never panics nor
// runs unbounded, selects only candidates, and decides the same way twice.
func FuzzCELPredicate(f *testing.F) {
	for _, expr := range []string{
		`managedCluster.metadata.labels.env == "prod"`,
		`managedCluster.scores("usage").exists(s, s.name == "cpu" && s.value > 50)`,
		`parseJSON(managedCluster.metadata.labels.info).tier == "gold"`,
		`managedCluster.status.allocatable.cpu == "4"`,
		`managedCluster.metadata.labels.env.upperAscii() == "DEV" || [3, 1].sort()[0] == 1`,
		`managedCluster.metadata.name`, `1 +`, `managedCluster.nope.deeper`,
		`managedCluster.metadata.labels.all(k, managedCluster.metadata.labels.all(j, k != j || true))`,
	} {
		f.Add(expr, "prod", `{"tier":"gold"}`)
	}
	future := time.Now().Add(time.Hour)
	f.Fuzz(func(t *testing.T, expr, env, info string) {
		in := defaultInput(clusterv1beta1.PlacementSpec{},
			newCluster("a").label("env", env).label("info", info).alloc("4", "8Gi").build(),
			newCluster("b").label("env", "dev").label("info", "{").build(),
			newCluster("c").build())
		in.Scores = []*clusterv1alpha1.AddOnPlacementScore{
			score("a", "usage", &future, clusterv1alpha1.AddOnPlacementScoreItem{Name: "cpu", Value: 80}),
		}
		in.Placement = placement(clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{celPredicate(expr)}})
		s := NewScheduler()
		first := s.Schedule(in)
		selected := sortedSelected(first)
		for _, name := range selected {
			if !slices.Contains([]string{"a", "b", "c"}, name) {
				t.Fatalf("selected %q, not a candidate", name)
			}
		}
		if first.Misconfigured.Status == "True" && len(selected) > 0 {
			t.Fatalf("misconfigured (%s) yet selected %v", first.Misconfigured.Message, selected)
		}
		if again := sortedSelected(s.Schedule(in)); !reflect.DeepEqual(again, selected) {
			t.Fatalf("selected %v, then %v", selected, again)
		}
	})
}
