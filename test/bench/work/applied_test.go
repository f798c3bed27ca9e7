package work

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// OCM's figures and our targets, printed next to ours.
const (
	ocmSingle = "OCM: ~30 ms p50 for one work; target ≤ 20 ms p50"
	ocmBurst  = "OCM: 0.44 s for a 20-work burst; target ≤ 0.3 s"
	ocmAgent  = "OCM: registration + work agents 176 MB at a handful of works; target ≤ 60 MB for our whole agent"
)

// BenchmarkWorkApplied measures, on the hub and -clusters managed clusters
// with real agents, the time from a ManifestWork's create returning on the
// hub to a hub watch delivering it with Applied True: -singles works created
// one at a time, then a burst of each -bursts size (created -concurrency at a
// time, spread over the clusters), each next to the lower bound of a raw
// client doing the same round trips. The agents' memory and CPU time are read
// around the largest burst and after -settle.
func BenchmarkWorkApplied(b *testing.B) {
	sizes, err := parseSizes(*burstSizes)
	if err != nil {
		b.Fatalf("-bursts: %v", err)
	}
	wf := startWorkFleet(b)
	ctx := b.Context()
	pids := map[string]int{}
	for _, c := range wf.clusters {
		pids[c] = wf.Pid(c, config.AgentNamespace, benchkit.AgentDeployment)
	}

	if *singleRuns > 0 {
		ours := wf.singles(ctx, b, *singleRuns)
		lower := wf.lowerBound(ctx, b, "lb-single", *singleRuns, 1)
		p50, lb50 := benchkit.Quantile(ours, 0.5), benchkit.Quantile(lower.latencies, 0.5)
		benchkit.Record(b, fmt.Sprintf("one work: create → Applied on hub, p50 of %d", len(ours)), ms(p50), ocmSingle)
		benchkit.Record(b, fmt.Sprintf("one work: create → Applied on hub, p99 of %d", len(ours)), ms(benchkit.Quantile(ours, 0.99)), "")
		benchkit.Record(b, "one work: lower bound (raw client, same round trips), p50", ms(lb50), fmt.Sprintf("ratio %.1f×", p50/lb50))
		b.ReportMetric(p50*1000, "single-p50-ms")
		wf.deletePhase(ctx, b, "single")
		wf.deletePhase(ctx, b, "lb-single")
	}

	for i, n := range sizes {
		largest := i == len(sizes)-1
		var before agentUsage
		if largest {
			before = wf.readAgents(b, pids)
		}
		r := wf.burst(ctx, b, n)
		var after agentUsage
		if largest {
			after = wf.readAgents(b, pids)
		}
		lower := wf.lowerBound(ctx, b, fmt.Sprintf("lb-burst-%d", n), n, *concurrency)
		p50, p99 := benchkit.Quantile(r.latencies, 0.5), benchkit.Quantile(r.latencies, 0.99)
		ctxt := ""
		if n == 20 {
			ctxt = ocmBurst
		}
		benchkit.Record(b, fmt.Sprintf("burst of %d: whole burst (first create → last Applied)", n), benchkit.Seconds(r.took), ctxt)
		benchkit.Record(b, fmt.Sprintf("burst of %d: the hub creates alone", n), benchkit.Seconds(r.creates), fmt.Sprintf("%d in flight at once", *concurrency))
		benchkit.Record(b, fmt.Sprintf("burst of %d: lower bound whole burst", n), benchkit.Seconds(lower.took), fmt.Sprintf("ratio %.1f×", r.took.Seconds()/lower.took.Seconds()))
		benchkit.Record(b, fmt.Sprintf("burst of %d: per work create → Applied, p50 / p99", n), ms(p50)+" / "+ms(benchkit.Quantile(r.latencies, 0.99)), "")
		benchkit.Record(b, fmt.Sprintf("burst of %d: lower bound per work, p50 / p99", n), ms(benchkit.Quantile(lower.latencies, 0.5))+" / "+ms(benchkit.Quantile(lower.latencies, 0.99)),
			fmt.Sprintf("ratio p50 %.1f×, p99 %.1f×", p50/benchkit.Quantile(lower.latencies, 0.5), p99/benchkit.Quantile(lower.latencies, 0.99)))
		b.ReportMetric(r.took.Seconds(), fmt.Sprintf("burst-%d-s", n))
		if largest {
			wf.recordAgents(b, n, before, after, r.took)
		}
		wf.deletePhase(ctx, b, fmt.Sprintf("lb-burst-%d", n))
		if !largest {
			wf.deletePhase(ctx, b, fmt.Sprintf("burst-%d", n))
		}
	}
	b.ReportMetric(0, "ns/op")
}

// recordAgents records the agents' memory and CPU over a burst of n works
// and again after the settle period.
func (wf *workFleet) recordAgents(b *testing.B, n int, before, after agentUsage, took time.Duration) {
	b.Helper()
	ctx := b.Context()
	b.Logf("settling for %s before the settled agent reading", *settlePeriod)
	t := time.NewTimer(*settlePeriod)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		b.Fatal(ctx.Err())
	}
	pids := map[string]int{}
	for _, c := range wf.clusters {
		pids[c] = wf.Pid(c, config.AgentNamespace, benchkit.AgentDeployment)
	}
	settled := wf.readAgents(b, pids)
	var maxRSS uint64
	for _, c := range wf.clusters {
		per := n / len(wf.clusters)
		benchkit.Record(b, fmt.Sprintf("agent of %s (%d works): RSS before / after burst / after %s settle", c, per, *settlePeriod),
			benchkit.MiB(before.mem[c].RSS)+" / "+benchkit.MiB(after.mem[c].RSS)+" / "+benchkit.MiB(settled.mem[c].RSS), ocmAgent)
		benchkit.Record(b, fmt.Sprintf("agent of %s: peak RSS (VmHWM) since start", c), benchkit.MiB(settled.mem[c].HWM), "")
		burstCPU := after.cpu[c] - before.cpu[c]
		benchkit.Record(b, fmt.Sprintf("agent of %s: CPU during the burst / during the settle", c),
			fmt.Sprintf("%.2f s / %.2f s", burstCPU.Seconds(), (settled.cpu[c]-after.cpu[c]).Seconds()),
			fmt.Sprintf("burst lasted %s: %.0f %% of one CPU", benchkit.Seconds(took), 100*burstCPU.Seconds()/took.Seconds()))
		maxRSS = max(maxRSS, settled.mem[c].RSS)
	}
	b.ReportMetric(float64(maxRSS)/(1<<20), fmt.Sprintf("agent-rss-%d-MiB", n))
}

// singles creates n works one at a time, spread over the clusters, each
// once the previous one was seen Applied, and returns their latencies.
func (wf *workFleet) singles(ctx context.Context, b *testing.B, n int) []float64 {
	b.Helper()
	const phase = "single"
	a := newAppliedTimes(n)
	a.notify = make(chan string, n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wf.watchWorks(wctx, b, phase, a.observe)
	for i := range n {
		c := wf.clusters[i%len(wf.clusters)]
		w := configMapWork(c, fmt.Sprintf("single-%03d", i), phase)
		if err := wf.HubClient.Create(ctx, w); err != nil {
			b.Fatal(err)
		}
		a.setCreated(c+"/"+w.Name, time.Now())
		select {
		case <-a.notify:
		case <-time.After(time.Minute):
			b.Fatalf("work %s/%s not Applied after a minute; agent log %s", c, w.Name, wf.Runner.LogPath(c, config.AgentNamespace, benchkit.AgentDeployment))
		}
	}
	lat, _ := a.latencies()
	return lat
}

// burstResult is one burst's figures.
type burstResult struct {
	latencies []float64     // per work, seconds
	took      time.Duration // first create started → last Applied seen
	creates   time.Duration // first create started → last create returned
}

// burst creates n works, -concurrency at a time, spread over the clusters,
// and waits until the hub watch delivered every one Applied.
func (wf *workFleet) burst(ctx context.Context, b *testing.B, n int) burstResult {
	b.Helper()
	phase := fmt.Sprintf("burst-%d", n)
	a := newAppliedTimes(n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wf.watchWorks(wctx, b, phase, a.observe)
	start := time.Now()
	errs := runConcurrently(n, *concurrency, func(i int) error {
		c := wf.clusters[i%len(wf.clusters)]
		w := configMapWork(c, fmt.Sprintf("%s-%04d", phase, i), phase)
		if err := wf.HubClient.Create(ctx, w); err != nil {
			return err
		}
		a.setCreated(c+"/"+w.Name, time.Now())
		return nil
	})
	if errs != nil {
		b.Fatalf("burst of %d: %v", n, errs)
	}
	created := time.Since(start)
	timeout := time.Minute + time.Duration(n)*200*time.Millisecond
	select {
	case <-a.done:
	case <-time.After(timeout):
		a.mu.Lock()
		seen := len(a.seen)
		a.mu.Unlock()
		b.Fatalf("burst of %d: only %d Applied after %s", n, seen, timeout)
	}
	lat, last := a.latencies()
	b.Logf("burst of %d: creates took %s, every work Applied after %s", n, created.Round(time.Millisecond), last.Sub(start).Round(time.Millisecond))
	return burstResult{latencies: lat, took: last.Sub(start), creates: created}
}

// lowerBound does, from the benchmark process, the API round trips the
// delivery of n works needs at the least, each work's sequentially and
// conc works at a time: the hub create of the ManifestWork (in a namespace
// no agent serves), the create of its ConfigMap on the managed cluster, and
// the hub status update with Applied True. Per work it measures from the
// hub create returning to the status update returning, as the agent's
// figure is measured from the create returning; the whole from the first
// create to the last status update.
func (wf *workFleet) lowerBound(ctx context.Context, b *testing.B, phase string, n, conc int) burstResult {
	b.Helper()
	lat := make([]float64, n)
	start := time.Now()
	err := runConcurrently(n, conc, func(i int) error {
		c := wf.clusters[i%len(wf.clusters)]
		name := fmt.Sprintf("%s-%04d", phase, i)
		w := configMapWork(lowerBoundNamespace, name, phase)
		if err := wf.HubClient.Create(ctx, w); err != nil {
			return err
		}
		created := time.Now()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: name}, Data: map[string]string{"a": "b"}}
		if err := wf.spokes[c].Create(ctx, cm); err != nil {
			return err
		}
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete",
			Message: "lower bound", ObservedGeneration: w.Generation, LastTransitionTime: metav1.Now()}}
		if err := wf.HubClient.Status().Update(ctx, w); err != nil {
			return err
		}
		lat[i] = time.Since(created).Seconds()
		return nil
	})
	took := time.Since(start)
	if err != nil {
		b.Fatalf("lower bound %s: %v", phase, err)
	}
	// The ConfigMaps are not owned by anything: remove them.
	for i := range n {
		c := wf.clusters[i%len(wf.clusters)]
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: fmt.Sprintf("%s-%04d", phase, i)}}
		if err := wf.spokes[c].Delete(ctx, cm); err != nil {
			b.Fatal(err)
		}
	}
	return burstResult{latencies: lat, took: took}
}

// runConcurrently calls fn(0..n-1), conc at a time, and returns the first error.
func runConcurrently(n, conc int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(max(1, conc))
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// parseSizes parses "20,100,1000" into ascending sizes.
func parseSizes(s string) ([]int, error) {
	out, err := benchkit.ParseList(s, func(f string) (int, error) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("bad size %q", f)
		}
		return n, nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ms formats seconds as milliseconds.
func ms(s float64) string { return fmt.Sprintf("%.1f ms", s*1000) }
