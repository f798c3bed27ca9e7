package placement

import (
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// benchInput is one placement over n clusters with an AddOn, a CPU and a
// Balance prioritizer in Exact mode, a label predicate, a toleration and
// numberOfClusters 10.
func benchInput(n int) Input {
	clusters := make([]*clusterv1.ManagedCluster, n)
	scores := make([]*clusterv1alpha1.AddOnPlacementScore, n)
	other := map[string]int{}
	for i := range clusters {
		name := fmt.Sprintf("cluster-%04d", i)
		b := newCluster(name).label("env", []string{"prod", "dev"}[i%2]).
			alloc(fmt.Sprintf("%dm", 1000+i*7%5000), fmt.Sprintf("%dMi", 2048+i%64))
		if i%10 == 0 {
			b.taint(clusterv1.ManagedClusterTaintUnreachable, "", clusterv1.TaintEffectNoSelect, now)
		}
		clusters[i] = b.build()
		scores[i] = score(name, "usage", nil, clusterv1alpha1.AddOnPlacementScoreItem{Name: "cpu", Value: int32(i%200) - 100})
		other[name] = i % 7
	}
	in := defaultInput(clusterv1beta1.PlacementSpec{
		NumberOfClusters: ptr.To[int32](10),
		Predicates:       []clusterv1beta1.ClusterPredicate{labelPredicate(map[string]string{"env": "prod"})},
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{
				addOn("usage", "cpu", 1), builtIn("ResourceAllocatableCPU", 1), builtIn("Balance", 1)}},
	}, clusters...)
	in.Scores, in.OtherDecisions = scores, other
	return in
}

// BenchmarkSchedule1000Clusters schedules one placement over 1,000 clusters.
func BenchmarkSchedule1000Clusters(b *testing.B) {
	in := benchInput(1000)
	s := NewScheduler()
	if res := s.Schedule(in); res.Selected != 10 {
		b.Fatalf("selected %d, want 10", res.Selected)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Schedule(in)
	}
}

// BenchmarkScheduleCEL1000Clusters schedules one placement with a CEL
// predicate reading labels and add-on scores over 1,000 clusters.
func BenchmarkScheduleCEL1000Clusters(b *testing.B) {
	in := benchInput(1000)
	for i, c := range in.Clusters {
		c.ResourceVersion = fmt.Sprint(i + 1)
	}
	in.Placement.Spec.Predicates = []clusterv1beta1.ClusterPredicate{celPredicate(
		`managedCluster.metadata.labels["env"] == "prod" && managedCluster.scores("usage").exists(s, s.name == "cpu" && s.value > 0)`)}
	s := NewScheduler()
	if res := s.Schedule(in); res.Selected != 10 {
		b.Fatalf("selected %d, want 10: %s", res.Selected, res.Misconfigured.Message)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Schedule(in)
	}
}
