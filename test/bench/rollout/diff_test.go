package rollout

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	workdiff "github.com/kubectl-ocm/kubectl-ocm/plugins/work/diff"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// spokeName is the managed control plane every in-process work agent
	// applies to.
	spokeName = "spoke"
	// diffSet is the ManifestWorkReplicaSet whose new manifests are
	// compared; its ConfigMaps live in diffObjectNamespace of the spoke.
	diffSet             = "app"
	diffObjectNamespace = "default"
)

// BenchmarkDiffReports registers -clusters simulated clusters and runs the
// real work agent of each in this process (benchkit.StartWorkAgents), all
// applying to one shared managed API server. A ManifestWorkReplicaSet of
// two ConfigMaps (strategy All) is rolled out and applied by those agents;
// then `kubectl ocm work diff app -f FILE --replicaset` runs in process
// with one ConfigMap changed. A hub watch of the ReportDiff works times
// each cluster's report, from the delivery of its work's creation to the
// delivery of its DiffReported condition (p50, p99, max), and the run times
// the command's writes, the last report and the command's return. The
// benchmark process's memory is read before the agents start and after the
// base rollout, and its CPU time over the diff.
//
// Every cluster's work names the same ConfigMaps, so all agents compare
// with the same live objects: the command takes one file for every cluster
// and a manifest names its namespace (a set's overrides may not change a
// manifest's identity), so on one managed API server the clusters' objects
// cannot differ without one command per cluster. It is what a homogeneous
// fleet holds, one copy per cluster. The base works orphan their objects
// (deleteOption Orphan), so that a hundred agents do not each add an owner
// reference to the same live object (each cluster's object has one owner).
func BenchmarkDiffReports(b *testing.B) {
	f := startFleet(b, false, spokeName)
	ctx := b.Context()
	n := len(f.clusters)
	heap0, rss0, g0 := processMemory(b)
	start := time.Now()
	agents := benchkit.StartWorkAgents(ctx, b, f.Fleet, spokeName, f.clusters, workagent.Options{})
	b.Logf("started %d work agents in process in %s (hub through %s, …)", n, benchkit.Seconds(time.Since(start)), agents.HubURLs[f.clusters[0]])

	times := &revisionTimes{}
	f.watchWorks(ctx, b, workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey, setLabel(b, diffSet), times.observe)
	base := []workv1.Manifest{configMap(diffObjectNamespace, "app-config", "v1"), configMap(diffObjectNamespace, "app-flags", "on")}
	set := newSet(diffSet, clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}, nil, base...)
	set.Spec.ManifestWorkTemplate.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
	start = time.Now()
	f.createSet(ctx, b, set, times)
	applied := waitApplied(ctx, b, times, f.clusters, "the base set "+diffSet)
	f.waitRolledOut(ctx, b, diffSet)
	benchkit.Record(b, fmt.Sprintf("base set (2 ConfigMaps, All) created → %d works Applied by the real agents", n), benchkit.Seconds(applied.Sub(start)), "")
	heap1, rss1, g1 := processMemory(b)
	benchkit.Record(b, fmt.Sprintf("%d in-process work agents: Go heap in use / process RSS added, goroutines added", n),
		fmt.Sprintf("%.1f / %.1f MiB, %d", mib(heap0, heap1), mib(rss0, rss1), g1-g0),
		fmt.Sprintf("%.2f MiB of heap and %.0f goroutines per agent, one shared manager and managed-cluster cache", mib(heap0, heap1)/float64(n), float64(g1-g0)/float64(n)))

	file := writeManifests(b, configMap(diffObjectNamespace, "app-config", "v2"), configMap(diffObjectNamespace, "app-flags", "on"))
	reports := &reportTimes{}
	f.watchWorks(ctx, b, workdiff.OfLabel, diffSet, reports.observe)
	cpu0 := processCPU(b)
	start = time.Now()
	r := f.ocm(ctx, "work", "diff", diffSet, "-f", file, "--replicaset", "-n", setNamespace, "-o", "json", "--timeout", diffTimeout.String())
	returned := time.Since(start)
	cpu := processCPU(b) - cpu0
	checkDiffReport(b, r, f.clusters)
	lat, last, err := reports.latencies(f.clusters)
	if err != nil {
		b.Fatal(err)
	}
	wrote := reports.lastCreated().Sub(start)
	allIn := last.Sub(start)
	firstDelete, lastDelete, ok := reports.deletions()
	if !ok {
		b.Fatal("the watch saw no ReportDiff work deleted by the command")
	}

	benchkit.Record(b, fmt.Sprintf("per cluster: ReportDiff work created → DiffReported, p50 / p99 / max of %d", n),
		fmt.Sprintf("%.2f / %.2f / %.2f s", benchkit.Quantile(lat, 0.5), benchkit.Quantile(lat, 0.99), benchkit.Quantile(lat, 1)),
		"each computed by the cluster's real work agent (server-side dry runs against the live objects)")
	benchkit.Record(b, fmt.Sprintf("work diff --replicaset: start → %d ReportDiff works written", n), benchkit.Seconds(wrote), "8 writes at a time, within the client limit (50/s, burst 100)")
	benchkit.Record(b, fmt.Sprintf("work diff --replicaset: start → all %d reports in", n), benchkit.Seconds(allIn), "")
	benchkit.Record(b, "work diff --replicaset: start → the command has every report (its first ReportDiff work deleted)", benchkit.Seconds(firstDelete.Sub(start)),
		"it lists its works every 0.5 s")
	benchkit.Record(b, "work diff --replicaset: start → command returned", benchkit.Seconds(returned),
		fmt.Sprintf("it deleted its %d works in %.2f s (first to last delete seen); benchmark process CPU during the command %.2f s (agents, CLI, simulated registration)",
			n, lastDelete.Sub(firstDelete).Seconds(), cpu.Seconds()))
	b.ReportMetric(benchkit.Quantile(lat, 0.5), "report-p50-s")
	b.ReportMetric(benchkit.Quantile(lat, 0.99), "report-p99-s")
	b.ReportMetric(allIn.Seconds(), "all-reports-s")
	b.ReportMetric(returned.Seconds(), "command-s")
	b.ReportMetric(mib(heap0, heap1)/float64(n), "heap-MiB-per-agent")
	b.ReportMetric(0, "ns/op")

	// The diff changed nothing on the managed cluster.
	cm := &corev1.ConfigMap{}
	if err := f.Env.Cluster(spokeName).Client().Get(ctx, client.ObjectKey{Namespace: diffObjectNamespace, Name: "app-config"}, cm); err != nil {
		b.Fatal(err)
	}
	if cm.Data["value"] != "v1" {
		b.Fatalf("ConfigMap %s/app-config holds %q after the diff, want v1", diffObjectNamespace, cm.Data["value"])
	}
}

// checkDiffReport fails b unless the command printed a report of every
// cluster in which app-config differs and app-flags does not. The command
// exits with an error when something differs, as kubectl diff does: that
// error is expected.
func checkDiffReport(b *testing.B, r cliResult, clusters []string) {
	b.Helper()
	fail := func(format string, args ...any) {
		b.Fatalf("kubectl ocm work diff: %s (returned %v)\nstderr: %s", fmt.Sprintf(format, args...), r.err, lastLines(r.errOut, 10))
	}
	report := &workdiff.Report{}
	if err := json.Unmarshal([]byte(r.out), report); err != nil {
		fail("decode the report: %v", err)
	}
	if len(report.Clusters) != len(clusters) {
		fail("%d clusters reported, want %d", len(report.Clusters), len(clusters))
	}
	for _, cd := range report.Clusters {
		results := map[string]string{}
		for _, m := range cd.Manifests {
			results[m.Name] = m.Result
		}
		if !cd.Differs || results["app-config"] != workv1.DiffReasonDiffers || results["app-flags"] != workv1.DiffReasonNoDiff {
			fail("cluster %s: differs %t, results %v; want app-config %s and app-flags %s", cd.Cluster, cd.Differs, results, workv1.DiffReasonDiffers, workv1.DiffReasonNoDiff)
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// writeManifests writes manifests as one YAML file in a temporary
// directory and returns its path.
func writeManifests(b *testing.B, manifests ...workv1.Manifest) string {
	b.Helper()
	docs := make([]string, 0, len(manifests))
	for _, m := range manifests {
		doc, err := yaml.JSONToYAML(m.Raw)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	path := filepath.Join(b.TempDir(), "manifests.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// processMemory returns the benchmark process's Go heap in use after a
// garbage collection, its resident memory and its goroutine count.
func processMemory(b *testing.B) (heap, rss uint64, goroutines int) {
	b.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m, err := benchkit.ReadProcMemory(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	return ms.HeapInuse, m.RSS, runtime.NumGoroutine()
}

// processCPU returns the CPU time the benchmark process has used.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	d, err := benchkit.ProcCPU(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// mib is b − a bytes in MiB (negative when memory was returned).
func mib(a, b uint64) float64 { return (float64(b) - float64(a)) / (1 << 20) }
