package registration

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// agentSideTarget is the target to read the agent side's memory by.
const agentSideTarget = "target ≤ 60 MB for the agent side (Klusterlet operator + agent)"

// agentWorkSteps is -agent-works: the ManifestWork counts of the readings
// after the idle one.
var agentWorkSteps = flag.String("agent-works", "20,500", "BenchmarkAgentSideMemory: ManifestWork counts (one ConfigMap each) of the readings after the idle one")

// workingSetWindows is -working-set-windows: the longer periods, after the
// idle reading, over which the idle working set is read again.
var workingSetWindows = flag.String("working-set-windows", "", "BenchmarkAgentSideMemory: longer periods than -settle (such as 2m,5m), each counted from the start of the idle settle period, over which the idle agent side's working set is read again")

// agentWorkNamespace is the managed cluster's namespace the works' ConfigMaps go to.
const agentWorkNamespace = "bench-agent-works"

// agentSideProcess is one process of the agent side.
type agentSideProcess struct{ label, namespace, name string }

// agentSide are the processes the agent side runs on a managed cluster.
var agentSide = []agentSideProcess{
	{"Klusterlet operator", operatorv1.OperatorNamespace, config.KlusterletOperatorName},
	{"agent", config.AgentNamespace, config.AgentDeployment},
}

// BenchmarkAgentSideMemory joins cluster1 through the Klusterlet operator, as
// `kubectl ocm join` installs it, and reads the memory of the operator and of
// the agent it installed after the -settle period: idle, then with each
// count of -agent-works ManifestWorks Applied.
func BenchmarkAgentSideMemory(b *testing.B) {
	steps, err := parseCounts(*agentWorkSteps)
	if err != nil {
		b.Fatalf("-agent-works: %v", err)
	}
	windows, err := parseDurations(*workingSetWindows)
	if err != nil {
		b.Fatalf("-working-set-windows: %v", err)
	}
	f := benchkit.StartFleet(b, config.HubOperatorValues{}, "cluster1")
	ctx := b.Context()
	benchkit.JoinClusterWithOperator(ctx, b, f, "cluster1")
	spoke := f.Env.Cluster("cluster1").Client()
	if err := spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentWorkNamespace}}); err != nil {
		b.Fatal(err)
	}
	cleared := clearReferenced(b, f)
	settle(ctx, b)
	readAgentSide(ctx, b, f, "idle")
	for _, w := range windows {
		b.Logf("idle until %s after the referenced pages were cleared", w)
		wait(ctx, b, time.Until(cleared.Add(w)))
		readWorkingSets(b, f, fmt.Sprintf("idle, referenced over %s", w))
	}
	created := 0
	for _, n := range steps {
		start := time.Now()
		createWorks(ctx, b, f.HubClient, "cluster1", created, n)
		created = max(created, n)
		waitWorksApplied(ctx, b, f.HubClient, "cluster1", created)
		b.Logf("%d works Applied %s after the first create of the step", created, time.Since(start).Round(time.Millisecond))
		clearReferenced(b, f)
		settle(ctx, b)
		readAgentSide(ctx, b, f, fmt.Sprintf("%d works", created))
	}
	b.ReportMetric(0, "ns/op")
}

// clearReferenced clears the accessed bits of the agent side's pages, so
// that the next readAgentSide counts the binary's pages touched from now on,
// and returns when.
func clearReferenced(b *testing.B, f *benchkit.Fleet) time.Time {
	b.Helper()
	for _, p := range agentSide {
		if err := benchkit.ClearReferenced(f.Pid("cluster1", p.namespace, p.name)); err != nil {
			b.Fatalf("clear the referenced pages of Deployment %s/%s: %v", p.namespace, p.name, err)
		}
	}
	return time.Now()
}

// readWorkingSets records the agent side's working sets: each process's and
// their sum.
func readWorkingSets(b *testing.B, f *benchkit.Fleet, when string) uint64 {
	b.Helper()
	var sum uint64
	for _, p := range agentSide {
		w, err := benchkit.ReadWorkingSet(f.Pid("cluster1", p.namespace, p.name))
		if err != nil {
			b.Fatalf("read the working set of Deployment %s/%s: %v", p.namespace, p.name, err)
		}
		benchkit.Record(b, fmt.Sprintf("%s, %s: working set (anon + file referenced of resident)", p.label, when),
			fmt.Sprintf("%s (%s + %s of %s)", benchkit.MiB(w.Total()), benchkit.MiB(w.Anon), benchkit.MiB(w.FileReferenced), benchkit.MiB(w.FileResident)), "")
		sum += w.Total()
	}
	benchkit.Record(b, "agent side (operator + agent), "+when+": sum of working sets", benchkit.MiB(sum),
		"the binary's pages both use counted twice; "+agentSideTarget)
	return sum
}

// readAgentSide records the memory of each agent-side process of cluster1
// and of the whole agent side: by RSS (the binary's shared pages counted per
// process), by PSS, by unique resident pages (counted once) and by working
// set (anonymous pages and the binary's pages referenced since
// clearReferenced).
func readAgentSide(ctx context.Context, b *testing.B, f *benchkit.Fleet, when string) {
	b.Helper()
	var rss, pss uint64
	var pids []int
	for _, p := range agentSide {
		pid := f.Pid("cluster1", p.namespace, p.name)
		m, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatalf("read the memory of Deployment %s/%s: %v", p.namespace, p.name, err)
		}
		runtimeMem := "no /metrics"
		if info, ok := f.Runner.Process("cluster1", p.namespace, p.name); ok {
			if g, err := readGoMemory(ctx, benchkit.FlagValue(info.Args, "--metrics-bind-address")); err == nil {
				runtimeMem = g.String()
			}
		}
		benchkit.Record(b, fmt.Sprintf("%s, %s: RSS (anon + file) / PSS", p.label, when),
			fmt.Sprintf("%s (%s + %s) / %s", benchkit.MiB(m.RSS), benchkit.MiB(m.RSSAnon), benchkit.MiB(m.RSSFile), benchkit.MiB(m.PSS)), "")
		benchkit.Record(b, fmt.Sprintf("%s, %s: Go runtime", p.label, when), runtimeMem, "")
		rss += m.RSS
		pss += m.PSS
		pids = append(pids, pid)
	}
	benchkit.Record(b, "agent side (operator + agent), "+when+": sum of RSS", benchkit.MiB(rss), "")
	benchkit.Record(b, "agent side (operator + agent), "+when+": sum of PSS", benchkit.MiB(pss), "the hub controller maps the same binary in this run")
	if u, ok, err := benchkit.UniqueResident(pids...); err != nil {
		b.Fatalf("read the resident pages of the agent side: %v", err)
	} else if ok {
		benchkit.Record(b, "agent side (operator + agent), "+when+": unique resident pages", benchkit.MiB(u), agentSideTarget)
	}
	readWorkingSets(b, f, when+", referenced over the settle period")
}

// goMemory is the Go runtime's view of a process's memory, from the
// go_memstats_* metrics of its /metrics endpoint, in bytes.
type goMemory struct {
	heapInuse, heapIdle, heapReleased, stackInuse, sys, heapSys, stackSys float64
}

// String is the breakdown the benchmark records.
func (g goMemory) String() string {
	mib := func(v float64) string { return benchkit.MiB(uint64(v)) }
	return fmt.Sprintf("heap in use %s, heap free kept %s, stacks %s, runtime other %s",
		mib(g.heapInuse), mib(g.heapIdle-g.heapReleased), mib(g.stackInuse), mib(g.sys-g.heapSys-g.stackSys))
}

// readGoMemory reads the go_memstats_* metrics from the /metrics endpoint
// at addr.
func readGoMemory(ctx context.Context, addr string) (goMemory, error) {
	var g goMemory
	if addr == "" || addr == "0" {
		return g, fmt.Errorf("metrics not served")
	}
	// Uncompressed: a gzip writer of the metrics handler would be counted in
	// the process's heap.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	m, err := framework.ScrapeMetrics(ctx, hc, "http://"+addr+"/metrics")
	if err != nil {
		return g, err
	}
	for name, dst := range map[string]*float64{
		"go_memstats_heap_inuse_bytes": &g.heapInuse, "go_memstats_heap_idle_bytes": &g.heapIdle,
		"go_memstats_heap_released_bytes": &g.heapReleased, "go_memstats_stack_inuse_bytes": &g.stackInuse,
		"go_memstats_sys_bytes": &g.sys, "go_memstats_heap_sys_bytes": &g.heapSys, "go_memstats_stack_sys_bytes": &g.stackSys,
	} {
		if _, ok := m[name]; !ok {
			return g, fmt.Errorf("%s/metrics: no %s", addr, name)
		}
		*dst = m.Sum(name, nil)
	}
	return g, nil
}

// createWorks creates ManifestWorks from index from up to to (excluded) for
// cluster, each with one ConfigMap in agentWorkNamespace.
func createWorks(ctx context.Context, b *testing.B, hub client.Client, cluster string, from, to int) {
	b.Helper()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("agent-mem-%04d", i)
		cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"a":"b"}}`, name, agentWorkNamespace)
		w := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(cm)}},
			}}},
		}
		if err := hub.Create(ctx, w); err != nil {
			b.Fatalf("create ManifestWork %s/%s: %v", cluster, name, err)
		}
	}
}

// waitWorksApplied waits until want ManifestWorks of cluster are Applied.
func waitWorksApplied(ctx context.Context, b *testing.B, hub client.Client, cluster string, want int) {
	b.Helper()
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("%d works of %s Applied", want, cluster), func(ctx context.Context) (bool, error) {
		l := &workv1.ManifestWorkList{}
		if err := hub.List(ctx, l, client.InNamespace(cluster)); err != nil {
			return false, err
		}
		n := 0
		for i := range l.Items {
			if c := meta.FindStatusCondition(l.Items[i].Status.Conditions, workv1.WorkApplied); c != nil && c.Status == metav1.ConditionTrue {
				n++
			}
		}
		return n >= want, nil
	})
}

// parseDurations parses a comma-separated list of positive durations.
func parseDurations(s string) ([]time.Duration, error) {
	return benchkit.ParseList(s, func(f string) (time.Duration, error) {
		d, err := time.ParseDuration(f)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a positive duration", f)
		}
		return d, nil
	})
}

// parseCounts parses a comma-separated list of positive counts.
func parseCounts(s string) ([]int, error) {
	return benchkit.ParseList(s, func(f string) (int, error) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a positive count", f)
		}
		return n, nil
	})
}
