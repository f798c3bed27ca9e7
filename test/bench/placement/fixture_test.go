package placement

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// benchSet is the exclusive ManagedClusterSet of every cluster.
	benchSet = "bench"
	// scoreName is the AddOnPlacementScore of every cluster, and scoreItem
	// its one score.
	scoreName = "demo"
	scoreItem = "score"
)

// clusterName is the name of the i-th cluster.
func clusterName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// parallel runs fn(0) … fn(n-1) with -concurrency calls in flight and
// returns the first error.
func parallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(max(1, *concurrency))
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// createClusters creates the exclusive set benchSet and -clusters
// ManagedClusters in it as the hub admin, each with an allocatable CPU in
// status, a namespace and an AddOnPlacementScore, with values spread
// deterministically.
func createClusters(ctx context.Context, b *testing.B, c client.Client) {
	b.Helper()
	start := time.Now()
	if err := c.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: benchSet}}); err != nil {
		b.Fatalf("create ManagedClusterSet %s: %v", benchSet, err)
	}
	err := parallel(*clusterCount, func(i int) error {
		name := clusterName(i)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: benchSet},
		}}
		if err := c.Create(ctx, mc); err != nil {
			return fmt.Errorf("create cluster %s: %w", name, err)
		}
		// The hub's registration controllers write the new cluster too.
		err := benchkit.UpdateStatus(ctx, c, mc, func() {
			mc.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceCPU: *resource.NewQuantity(int64(1+i*7%64), resource.DecimalSI)}
		})
		if err != nil {
			return fmt.Errorf("set status of cluster %s: %w", name, err)
		}
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
		score := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: scoreName}}
		if err := c.Create(ctx, score); err != nil {
			return fmt.Errorf("create score of %s: %w", name, err)
		}
		score.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: scoreItem, Value: int32(i*37%201 - 100)}}
		if err := c.Status().Update(ctx, score); err != nil {
			return fmt.Errorf("set score of %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d clusters with namespaces and AddOnPlacementScores in %s", *clusterCount, benchkit.Seconds(time.Since(start)))
}

// waitHubSettled waits until the hub's registration controllers have
// reconciled every cluster, at least n of them: each is never-joined, so the
// hub taints it unreachable. Scheduling is timed only after that, so that no
// taint write reschedules the placements in the middle of a measurement.
func waitHubSettled(ctx context.Context, b *testing.B, c client.Client, n int) {
	b.Helper()
	benchkit.Poll(ctx, b, time.Second, 20*time.Minute, fmt.Sprintf("%d clusters tainted unreachable by the hub", n), func(ctx context.Context) (bool, error) {
		list := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		tainted := 0
		for i := range list.Items {
			if list.Items[i].Spec.FindTaint(clusterv1.ManagedClusterTaintUnreachable) != nil {
				tainted++
			}
		}
		return tainted >= n, nil
	})
}

// bindNamespace creates namespace ns with benchSet bound to it.
func bindNamespace(ctx context.Context, b *testing.B, c client.Client, ns string) {
	b.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: benchSet},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: benchSet},
	}
	if err := c.Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
}

// tolerateNeverJoined lets a placement select the benchmark's clusters,
// which the hub taints unreachable because no agent ever joined them.
var tolerateNeverJoined = []clusterv1beta1.Toleration{
	{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
	{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists},
}

// ocmSpec is the spec of OCM's benchmark placements: n clusters ranked in
// Exact mode by the add-on score, ResourceAllocatableCPU and Balance.
func ocmSpec(n int32) clusterv1beta1.PlacementSpec {
	coord := func(builtIn string) *clusterv1beta1.ScoreCoordinate {
		return &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: builtIn}
	}
	return clusterv1beta1.PlacementSpec{
		NumberOfClusters: ptr.To(n),
		Tolerations:      tolerateNeverJoined,
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact, Configurations: []clusterv1beta1.PrioritizerConfig{
			{Weight: 1, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
				AddOn: &clusterv1beta1.AddOnScore{ResourceName: scoreName, ScoreName: scoreItem}}},
			{Weight: 1, ScoreCoordinate: coord(clusterv1beta1.PrioritizerResourceAllocatableCPU)},
			{Weight: 1, ScoreCoordinate: coord(clusterv1beta1.PrioritizerBalance)},
		}},
	}
}

// createPlacements creates count placements <prefix>-<i> in ns with spec
// and returns how long creating them took.
func createPlacements(ctx context.Context, b *testing.B, c client.Client, ns, prefix string, count int, spec clusterv1beta1.PlacementSpec) time.Duration {
	b.Helper()
	start := time.Now()
	err := parallel(count, func(i int) error {
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", prefix, i)}, Spec: *spec.DeepCopy()}
		if err := c.Create(ctx, p); err != nil {
			return fmt.Errorf("create placement %s: %w", p.Name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// waitIdle waits until the process pid has used less than 2% of one CPU
// over a second, at most timeout: the controller has drained its queue. It
// is a measurement condition between phases, not synchronization.
func waitIdle(ctx context.Context, b *testing.B, pid int, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	last, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	for time.Now().Before(deadline) {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
		now, err := benchkit.ProcCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		if now-last < 20*time.Millisecond {
			return
		}
		last = now
	}
	b.Logf("the hub controller was still busy after %s", timeout)
}
