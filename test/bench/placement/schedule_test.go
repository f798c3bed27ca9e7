package placement

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// ocmLarge and ocmSmall are OCM's figures to read ours by.
	ocmLarge = "OCM: 21.6 s on this kind of machine; target ≤ 5 s"
	ocmSmall = "OCM: 3.0 s"
	// pickLabel is the label the picker placement selects by.
	pickLabel = "bench.ocm.io/pick"
)

// BenchmarkSchedulePlacements runs OCM's placement benchmark scenario on the
// real hub process: -clusters clusters with scores, -small-placements
// placements of 1 cluster, -placements placements of 10 clusters, the hub's
// memory around them, and -label-changes timed cluster label changes.
func BenchmarkSchedulePlacements(b *testing.B) {
	f := benchkit.StartFleet(b, config.HubOperatorValues{})
	ctx := b.Context()
	pid := f.Pid("hub", config.HubNamespace, benchkit.HubController)
	hubW, err := client.NewWithWatch(f.Hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: f.HubClient.RESTMapper()})
	if err != nil {
		b.Fatal(err)
	}
	createClusters(ctx, b, f.HubClient)
	waitHubSettled(ctx, b, f.HubClient, *clusterCount)
	waitIdle(ctx, b, pid, 5*time.Minute)
	rss(b, f, pid, fmt.Sprintf("hub RSS, %d clusters with scores, no placement", *clusterCount), "")

	installBoundCRDs(ctx, b, f.HubClient)

	small := schedulePhase(ctx, b, f, hubW, "bench-small", *smallCount, 1)
	benchkit.Record(b, fmt.Sprintf("%d placements × 1 cluster: first create → all decisions written", *smallCount), benchkit.Seconds(small), ocmSmall)
	waitIdle(ctx, b, pid, 5*time.Minute)
	smallBound := rawBound(ctx, b, f.HubClient, "bound-small", *smallCount, 1)
	benchkit.Record(b, fmt.Sprintf("%d placements × 1 cluster: raw-client lower bound (the same writes)", *smallCount), benchkit.Seconds(smallBound), ratio(small, smallBound))
	waitIdle(ctx, b, pid, 5*time.Minute)

	large := schedulePhase(ctx, b, f, hubW, "bench-large", *placementCount, 10)
	benchkit.Record(b, fmt.Sprintf("%d placements × 10 clusters (Exact: AddOn, CPU, Balance): first create → all decisions written", *placementCount),
		benchkit.Seconds(large), ocmLarge)
	rss(b, f, pid, "hub RSS right after", "")
	waitIdle(ctx, b, pid, 5*time.Minute)
	largeBound := rawBound(ctx, b, f.HubClient, "bound-large", *placementCount, 10)
	benchkit.Record(b, fmt.Sprintf("%d placements × 10 clusters: raw-client lower bound (the same writes)", *placementCount), benchkit.Seconds(largeBound), ratio(large, largeBound))
	waitIdle(ctx, b, pid, 5*time.Minute)
	settled := rss(b, f, pid, fmt.Sprintf("hub RSS, %d placements scheduled, idle", *smallCount+*placementCount), "OCM: 161 MB (registration + placement hub controllers)")
	benchkit.Record(b, "hub peak RSS (VmHWM) over the benchmark", benchkit.MiB(settled.HWM), "")

	lat, taintLat := changeLatency(ctx, b, f, pid)
	benchkit.Record(b, fmt.Sprintf("cluster label change → updated decisions, p50 of %d", len(lat)), fmt.Sprintf("%.2f s", benchkit.Quantile(lat, 0.5)),
		fmt.Sprintf("%d clusters; only the placement reading labels is rescheduled", *clusterCount))
	benchkit.Record(b, "cluster label change → updated decisions, all", benchkit.SecondsList(lat), "")
	benchkit.Record(b, fmt.Sprintf("cluster taint change → updated decisions, p50 of %d", len(taintLat)), fmt.Sprintf("%.2f s", benchkit.Quantile(taintLat, 0.5)),
		fmt.Sprintf("each change reschedules all %d placements", *smallCount+*placementCount+1))
	benchkit.Record(b, "cluster taint change → updated decisions, all", benchkit.SecondsList(taintLat), "")
	b.ReportMetric(large.Seconds(), "large-s")
	b.ReportMetric(small.Seconds(), "small-s")
	b.ReportMetric(large.Seconds()/largeBound.Seconds(), "large-bound-ratio")
	b.ReportMetric(benchkit.Quantile(lat, 0.5), "label-p50-s")
	b.ReportMetric(benchkit.Quantile(taintLat, 0.5), "taint-p50-s")
	b.ReportMetric(float64(settled.RSS)/(1<<20), "rss-MiB")
	b.ReportMetric(0, "ns/op")
}

// schedulePhase creates count placements of n clusters in a new namespace
// ns bound to the clusters' set and returns the time from the first create
// to the watch event that completed the last placement's decisions.
func schedulePhase(ctx context.Context, b *testing.B, f *benchkit.Fleet, hubW client.WithWatch, ns string, count int, n int32) time.Duration {
	b.Helper()
	bindNamespace(ctx, b, f.HubClient, ns)
	dw, err := watchDecisions(ctx, hubW, ns)
	if err != nil {
		b.Fatal(err)
	}
	pid := f.Pid("hub", config.HubNamespace, benchkit.HubController)
	cpu0, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	created := createPlacements(ctx, b, f.HubClient, ns, "p", count, ocmSpec(n))
	at, writes, err := dw.waitComplete(ctx, count, int(n), 10*time.Minute)
	if err != nil {
		b.Fatalf("%s: %v", ns, err)
	}
	took := at.Sub(start)
	cpu1, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d placements created in %s; all decided %d clusters after %s; %d PlacementDecision writes seen (at least %d)",
		ns, count, benchkit.Seconds(created), n, benchkit.Seconds(took), writes, 2*count)
	benchkit.Record(b, fmt.Sprintf("%s: hub CPU time (utime+stime) from first create to all decided", ns), benchkit.Seconds(cpu1-cpu0),
		fmt.Sprintf("placements created in %s; %d PlacementDecision writes (minimum %d)", benchkit.Seconds(created), writes, 2*count))
	return took
}

// rss reads and records the hub controller's memory.
func rss(b *testing.B, f *benchkit.Fleet, pid int, name, context string) benchkit.ProcMemory {
	b.Helper()
	if now := f.Pid("hub", config.HubNamespace, benchkit.HubController); now != pid {
		b.Fatalf("the hub controller is now pid %d, not %d: it restarted; see its log %s",
			now, pid, f.Runner.LogPath("hub", config.HubNamespace, benchkit.HubController))
	}
	m, err := benchkit.ReadProcMemory(pid)
	if err != nil {
		b.Fatal(err)
	}
	benchkit.Record(b, name, benchkit.MiB(m.RSS), context)
	return m
}

// changeLatency times -label-changes cluster label changes, then as many
// taint changes. Each label change labels one more cluster with pickLabel
// and is timed from just before the patch to the picker placement (which
// selects by that label) deciding it; no other placement reads labels, so
// no other is rescheduled. Each taint change then taints one of those
// clusters NoSelect and is timed to the picker dropping it; a taint change
// reschedules every placement that may select the cluster, all of them
// here. The controller is let go idle between changes.
func changeLatency(ctx context.Context, b *testing.B, f *benchkit.Fleet, pid int) (labels, taints []float64) {
	b.Helper()
	const ns = "bench-large"
	picker := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "picker"}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: tolerateNeverJoined,
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{pickLabel: "true"}},
		}}},
	}}
	if err := f.HubClient.Create(ctx, picker); err != nil {
		b.Fatal(err)
	}
	decided := func(ctx context.Context) ([]string, error) {
		d := &clusterv1beta1.PlacementDecision{}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterv1beta1.PlacementDecisionName("picker", 1)}, d); err != nil {
			return nil, err
		}
		var out []string
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
		return out, nil
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, "the picker's empty PlacementDecision", func(ctx context.Context) (bool, error) {
		_, err := decided(ctx)
		return err == nil, err
	})
	waitIdle(ctx, b, pid, 5*time.Minute)
	timeChange := func(what, name string, change func(*clusterv1.ManagedCluster), done func([]string) bool) float64 {
		mc := &clusterv1.ManagedCluster{}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			b.Fatal(err)
		}
		base := mc.DeepCopy()
		change(mc)
		start := time.Now()
		if err := f.HubClient.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
			b.Fatal(err)
		}
		at := benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, "the picker's decisions after the "+what+" of "+name, func(ctx context.Context) (bool, error) {
			got, err := decided(ctx)
			return err == nil && done(got), err
		})
		b.Logf("%s change of %s: %s", what, name, benchkit.Seconds(at.Sub(start)))
		waitIdle(ctx, b, pid, 5*time.Minute)
		return at.Sub(start).Seconds()
	}
	var picked []string
	for k := 0; k < *labelChanges; k++ {
		name := clusterName(k * 97 % *clusterCount)
		picked = append(picked, name)
		labels = append(labels, timeChange("label", name, func(mc *clusterv1.ManagedCluster) { mc.Labels[pickLabel] = "true" },
			func(got []string) bool { return slices.Contains(got, name) }))
	}
	for _, name := range picked {
		taints = append(taints, timeChange("taint", name, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: "bench.ocm.io/drain", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		}, func(got []string) bool { return !slices.Contains(got, name) }))
	}
	return labels, taints
}
