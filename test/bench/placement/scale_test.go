package placement

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	// scaleNS is the namespace of BenchmarkPlacementsAtScale's placements.
	scaleNS = "bench-scale"
	// sliceLabel is the label each placement selects one value of.
	sliceLabel = "bench.ocm.io/slice"
	// drainTaint is the NoSelect taint of the taint operations.
	drainTaint = "bench.ocm.io/drain"
	// kubeFleetSLO is the published target the latencies are read by.
	kubeFleetSLO = "KubeFleet SLO: p90 < 30 s"
	// placementController is the controller name of the scheduler in the
	// controller-runtime metrics.
	placementController = "placement"
)

// sliceValue is the value of sliceLabel for slice k.
func sliceValue(k int) string { return fmt.Sprintf("s%03d", k%max(1, *sliceCount)) }

// BenchmarkPlacementsAtScale times placements created while clusters change:
// -clusters clusters spread over -slices values of a label, then -placements
// placements, each selecting the clusters of one value, created while
// clusters are created and relabeled at -churn-rate. Each placement is
// timed from its create to the watch event of its first decisions, and
// p50/p90/p99 are printed next to KubeFleet's SLO. Then, the hub idle, it
// counts the scheduler's reconciles (the hub controller's
// controller_runtime_reconcile_total) per cluster re-label, creation and
// taint, one operation at a time.
func BenchmarkPlacementsAtScale(b *testing.B) {
	f := benchkit.StartFleet(b, config.HubOperatorValues{})
	ctx := b.Context()
	pid := f.Pid("hub", config.HubNamespace, benchkit.HubController)
	hubW, err := client.NewWithWatch(f.Hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: f.HubClient.RESTMapper()})
	if err != nil {
		b.Fatal(err)
	}
	m := newHubMetrics(ctx, b, f)
	createSlicedClusters(ctx, b, f.HubClient)
	waitHubSettled(ctx, b, f.HubClient, *clusterCount)
	// At 10,000 clusters the hub is never quite idle (< 2 % of a core):
	// bounded.
	waitIdle(ctx, b, pid, 3*time.Minute)
	rss(b, f, pid, fmt.Sprintf("hub RSS, %d clusters, no placement", *clusterCount), "")
	events := countClusterEvents(ctx, b, hubW)
	bindNamespace(ctx, b, f.HubClient, scaleNS)

	ch := &churner{c: f.HubClient, slice: map[int]int{}}
	lat := placeWithChurn(ctx, b, f, hubW, m, events, ch)
	b.ReportMetric(benchkit.Quantile(lat, 0.5), "p50-s")
	b.ReportMetric(benchkit.Quantile(lat, 0.9), "p90-s")
	b.ReportMetric(benchkit.Quantile(lat, 0.99), "p99-s")

	// The hub taints the clusters the churn created; then, idle, one
	// operation at a time.
	waitHubSettled(ctx, b, f.HubClient, *clusterCount+ch.created)
	m.waitSchedulerIdle(ctx, b)

	for _, k := range []struct {
		name   string
		op     func(context.Context) (string, error)
		settle func(context.Context, *testing.B, client.Client, string)
	}{
		{"re-label (slice to the next value)", ch.relabel, nil},
		{"create (then tainted unreachable by the hub)", ch.create, waitTainted},
		{"NoSelect taint on a decided cluster", ch.taint, nil},
	} {
		perOp := reconcilesPerOp(ctx, b, m, events, k.name, k.op, k.settle, f.HubClient)
		b.ReportMetric(perOp, "reconciles/"+strings.Fields(k.name)[0])
	}
	settled := rss(b, f, pid, fmt.Sprintf("hub RSS, %d clusters, %d placements, idle", *clusterCount, *placementCount), "")
	benchkit.Record(b, "hub peak RSS (VmHWM) over the benchmark", benchkit.MiB(settled.HWM), "")
	b.ReportMetric(0, "ns/op")
}

// createSlicedClusters creates the exclusive set benchSet and -clusters
// ManagedClusters in it, cluster i labeled with slice i: one create each,
// nothing else (no namespace, score or status).
func createSlicedClusters(ctx context.Context, b *testing.B, c client.Client) {
	b.Helper()
	start := time.Now()
	if err := c.Create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: benchSet}}); err != nil {
		b.Fatalf("create ManagedClusterSet %s: %v", benchSet, err)
	}
	err := parallel(*clusterCount, func(i int) error {
		return createSliced(ctx, c, clusterName(i), i)
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d clusters over %d slices in %s", *clusterCount, *sliceCount, benchkit.Seconds(time.Since(start)))
}

// createSliced creates ManagedCluster name in benchSet with slice k.
func createSliced(ctx context.Context, c client.Client, name string, k int) error {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: benchSet, sliceLabel: sliceValue(k)},
	}}
	if err := c.Create(ctx, mc); err != nil {
		return fmt.Errorf("create cluster %s: %w", name, err)
	}
	return nil
}

// waitTainted waits until the hub has tainted the new cluster name
// unreachable: the hub's own write to a created cluster is part of the
// operation's events.
func waitTainted(ctx context.Context, b *testing.B, c client.Client, name string) {
	b.Helper()
	benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, "cluster "+name+" tainted unreachable", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, err
		}
		return mc.Spec.FindTaint(clusterv1.ManagedClusterTaintUnreachable) != nil, nil
	})
}

// churner makes the cluster operations of the benchmark: it creates
// clusters churn-<n>, moves clusters bench-<j> to the next slice and taints
// them, each in a deterministic order. It is not safe for concurrent use.
type churner struct {
	c client.Client
	// created, relabeled and tainted count the operations made.
	created, relabeled, tainted int
	// slice is the current slice of the relabeled clusters, by index.
	slice map[int]int
}

// step is the stride through the clusters (a prime, so that it visits
// every cluster before any twice).
const step = 7919

// create creates the next churn cluster, in the next slice.
func (ch *churner) create(ctx context.Context) (string, error) {
	name := fmt.Sprintf("churn-%05d", ch.created)
	err := createSliced(ctx, ch.c, name, ch.created)
	ch.created++
	return name, err
}

// relabel moves the next cluster to the slice after its own.
func (ch *churner) relabel(ctx context.Context) (string, error) {
	j := ch.relabeled * step % *clusterCount
	ch.relabeled++
	cur, ok := ch.slice[j]
	if !ok {
		cur = j % *sliceCount
	}
	ch.slice[j] = (cur + 1) % *sliceCount
	name := clusterName(j)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, sliceLabel, sliceValue(ch.slice[j]))
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := ch.c.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return name, fmt.Errorf("re-label cluster %s: %w", name, err)
	}
	return name, nil
}

// taint adds drainTaint to the next cluster, which the placements of its
// slice decide.
func (ch *churner) taint(ctx context.Context) (string, error) {
	j := (ch.tainted*step + step/2) % *clusterCount
	ch.tainted++
	name := clusterName(j)
	mc := &clusterv1.ManagedCluster{}
	if err := ch.c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return name, err
	}
	err := benchkit.Update(ctx, ch.c, mc, func() {
		if mc.Spec.FindTaint(drainTaint) == nil {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: drainTaint, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		}
	})
	if err != nil {
		return name, fmt.Errorf("taint cluster %s: %w", name, err)
	}
	return name, nil
}

// run makes cluster operations at rate per second, creates and re-labels in
// turn, until the returned stop is called; stop returns how many it made
// and the first error.
func (ch *churner) run(ctx context.Context, rate float64) (stop func() (int, error)) {
	done := make(chan struct{})
	var (
		wg    sync.WaitGroup
		ops   int
		first error
	)
	wg.Go(func() {
		if rate <= 0 {
			return
		}
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			op := ch.create
			if ops%2 == 1 {
				op = ch.relabel
			}
			if _, err := op(ctx); err != nil && first == nil {
				first = err
			}
			ops++
		}
	})
	return func() (int, error) {
		close(done)
		wg.Wait()
		return ops, first
	}
}

// placeWithChurn creates -placements placements in scaleNS, placement i
// selecting slice i, while ch churns the clusters, and returns each
// placement's seconds from its create to its first decisions.
func placeWithChurn(ctx context.Context, b *testing.B, f *benchkit.Fleet, hubW client.WithWatch, m *hubMetrics, events *atomic.Int64, ch *churner) []float64 {
	b.Helper()
	dw, err := watchDecisions(ctx, hubW, scaleNS)
	if err != nil {
		b.Fatal(err)
	}
	pid := f.Pid("hub", config.HubNamespace, benchkit.HubController)
	cpu0, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	h0 := m.timings(ctx, b)
	r0, e0 := m.reconciles(ctx, b), events.Load()
	start := time.Now()
	stop := ch.run(ctx, *churnRate)
	createdAt := make([]time.Time, *placementCount)
	err = parallel(*placementCount, func(i int) error {
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: scaleNS, Name: fmt.Sprintf("p-%04d", i)}, Spec: clusterv1beta1.PlacementSpec{
			Tolerations: tolerateNeverJoined,
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{sliceLabel: sliceValue(i)}},
			}}},
		}}
		createdAt[i] = time.Now()
		if err := f.HubClient.Create(ctx, p); err != nil {
			return fmt.Errorf("create placement %s: %w", p.Name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	created := time.Since(start)
	first, err := dw.waitFirst(ctx, *placementCount, 60*time.Minute)
	ops, churnErr := stop()
	if err != nil {
		b.Fatalf("%s: %v", scaleNS, err)
	}
	if churnErr != nil {
		b.Fatalf("cluster churn: %v", churnErr)
	}
	r1, e1 := m.reconciles(ctx, b), events.Load()
	h1 := m.timings(ctx, b)
	cpu1, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]float64, 0, len(createdAt))
	var last time.Time
	for i, at := range createdAt {
		t, ok := first[fmt.Sprintf("p-%04d", i)]
		if !ok {
			b.Fatalf("no first decisions of p-%04d", i)
		}
		lat = append(lat, t.Sub(at).Seconds())
		if t.After(last) {
			last = t
		}
	}
	what := fmt.Sprintf("%d placements over %d clusters (%d slices), %.0f cluster ops/s", *placementCount, *clusterCount, *sliceCount, *churnRate)
	benchkit.Record(b, what+": create → first decisions, p50 / p90 / p99 / max",
		fmt.Sprintf("%.2f / %.2f / %.2f / %.2f s", benchkit.Quantile(lat, 0.5), benchkit.Quantile(lat, 0.9), benchkit.Quantile(lat, 0.99), benchkit.Quantile(lat, 1)),
		kubeFleetSLO)
	benchkit.Record(b, what+": first create → all decided", benchkit.Seconds(last.Sub(start)),
		fmt.Sprintf("placements created in %s; %d cluster operations, %d cluster events meanwhile", benchkit.Seconds(created), ops, e1-e0))
	benchkit.Record(b, what+": scheduler reconciles, hub CPU", fmt.Sprintf("%.0f, %s", r1-r0, benchkit.Seconds(cpu1-cpu0)),
		fmt.Sprintf("%d placements; %.1f reconciles per cluster event beyond one per placement", *placementCount, (r1-r0-float64(*placementCount))/float64(max(1, e1-e0))))
	reconcile, queued := h1.reconcile.since(h0.reconcile), h1.queued.since(h0.queued)
	benchkit.Record(b, what+": scheduler's mean reconcile time / mean wait in its queue", fmt.Sprintf("%.3f / %.2f s", reconcile, queued),
		"controller_runtime_reconcile_time_seconds, workqueue_queue_duration_seconds")
	return lat
}

// reconcilesPerOp makes -churn-ops operations op one at a time, each
// settled (when settle is set) and followed by the scheduler's queue
// draining, records the scheduler's reconciles per operation and per
// ManagedCluster watch event, and returns the reconciles per operation.
func reconcilesPerOp(ctx context.Context, b *testing.B, m *hubMetrics, events *atomic.Int64, name string,
	op func(context.Context) (string, error), settle func(context.Context, *testing.B, client.Client, string), c client.Client) float64 {
	b.Helper()
	m.waitSchedulerIdle(ctx, b)
	r0, e0 := m.reconciles(ctx, b), events.Load()
	start := time.Now()
	for i := 0; i < *churnOps; i++ {
		cluster, err := op(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if settle != nil {
			settle(ctx, b, c, cluster)
		}
		m.waitSchedulerIdle(ctx, b)
	}
	r1, e1 := m.reconciles(ctx, b), events.Load()
	perOp, perEvent := (r1-r0)/float64(max(1, *churnOps)), (r1-r0)/float64(max(1, e1-e0))
	benchkit.Record(b, fmt.Sprintf("cluster %s: scheduler reconciles per operation", name),
		fmt.Sprintf("%.1f (%.1f per cluster event)", perOp, perEvent),
		fmt.Sprintf("%d operations one at a time, %d cluster events, %s; %d placements of %d slices", *churnOps, e1-e0, benchkit.Seconds(time.Since(start)), *placementCount, *sliceCount))
	return perOp
}

// countClusterEvents counts the ManagedCluster watch events (adds and
// updates) the benchmark sees from now on, through an informer.
func countClusterEvents(ctx context.Context, b *testing.B, w client.WithWatch) *atomic.Int64 {
	b.Helper()
	var n atomic.Int64
	var loops sync.WaitGroup
	b.Cleanup(loops.Wait)
	synced := benchkit.RunInformer(ctx, &loops, benchkit.ListWatch(w, &clusterv1.ManagedClusterList{}), &clusterv1.ManagedCluster{},
		func(any) { n.Add(1) })
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, "the ManagedCluster informer synced", func(context.Context) (bool, error) {
		return synced(), nil
	})
	n.Store(0)
	return &n
}

// hubMetrics reads the hub controller's /metrics.
type hubMetrics struct {
	url string
	hc  *http.Client
}

// newHubMetrics finds the hub controller's metrics address (the component
// runner moves it to a loopback port) and checks that it serves the
// scheduler's reconcile counter.
func newHubMetrics(ctx context.Context, b *testing.B, f *benchkit.Fleet) *hubMetrics {
	b.Helper()
	info, ok := f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)
	if !ok {
		b.Fatal("no hub controller process")
	}
	addr := benchkit.FlagValue(info.Args, "--metrics-bind-address")
	if addr == "" || addr == "0" {
		b.Fatalf("the hub controller serves no metrics (args %v)", info.Args)
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	m := &hubMetrics{url: "http://" + addr + "/metrics", hc: &http.Client{Timeout: 10 * time.Second}}
	m.reconciles(ctx, b)
	return m
}

// scrape reads the metrics once.
func (m *hubMetrics) scrape(ctx context.Context) (framework.Metrics, error) {
	got, err := framework.ScrapeMetrics(ctx, m.hc, m.url)
	if err != nil {
		return nil, fmt.Errorf("read the hub controller's metrics: %w", err)
	}
	return got, nil
}

// reconciles returns the scheduler's reconciles so far, every result.
func (m *hubMetrics) reconciles(ctx context.Context, b *testing.B) float64 {
	b.Helper()
	s, err := m.scrape(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return s.Sum("controller_runtime_reconcile_total", map[string]string{"controller": placementController})
}

// histogram is the count and sum of a histogram's samples.
type histogram struct{ count, sum float64 }

// since returns the mean of the samples taken after h0.
func (h histogram) since(h0 histogram) float64 {
	if h.count <= h0.count {
		return 0
	}
	return (h.sum - h0.sum) / (h.count - h0.count)
}

// schedulerTimings are the scheduler's reconcile durations and the time
// its requests waited in its queue.
type schedulerTimings struct{ reconcile, queued histogram }

// timings reads the scheduler's timing histograms.
func (m *hubMetrics) timings(ctx context.Context, b *testing.B) schedulerTimings {
	b.Helper()
	s, err := m.scrape(ctx)
	if err != nil {
		b.Fatal(err)
	}
	read := func(name string) histogram {
		var h histogram
		mf, ok := s[name]
		if !ok {
			return h
		}
		for _, sample := range mf.GetMetric() {
			for _, l := range sample.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == placementController {
					h.count += float64(sample.GetHistogram().GetSampleCount())
					h.sum += sample.GetHistogram().GetSampleSum()
				}
			}
		}
		return h
	}
	return schedulerTimings{reconcile: read("controller_runtime_reconcile_time_seconds"), queued: read("workqueue_queue_duration_seconds")}
}

// waitSchedulerIdle waits until the scheduler's queue is empty, no worker is
// busy and its reconcile count held still over two scrapes 200 ms apart,
// after letting the events of the last change arrive.
func (m *hubMetrics) waitSchedulerIdle(ctx context.Context, b *testing.B) {
	b.Helper()
	match := map[string]string{"controller": placementController}
	prev, still := -1.0, 0
	time.Sleep(300 * time.Millisecond)
	benchkit.Poll(ctx, b, 200*time.Millisecond, 30*time.Minute, "the scheduler idle", func(ctx context.Context) (bool, error) {
		s, err := m.scrape(ctx)
		if err != nil {
			return false, err
		}
		total := s.Sum("controller_runtime_reconcile_total", match)
		if s.Sum("workqueue_depth", match) == 0 && s.Sum("controller_runtime_active_workers", match) == 0 && total == prev {
			still++
		} else {
			still = 0
		}
		prev = total
		return still >= 2, nil
	})
}
