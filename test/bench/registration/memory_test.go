package registration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// ocmHubMemory is OCM's figure to read ours by.
const ocmHubMemory = "OCM: 161 MB (registration + placement hub controllers); target ≤ 80 MB for the whole hub process"

// BenchmarkHubMemory reads the resident memory (VmRSS of /proc/<pid>/status)
// of the ocm-controller hub process with 2 registered clusters, joined by real
// agents, and with -clusters registered clusters, the others joined by
// simulated agents (see benchkit.SimAgent). Each count is read as soon as the hub has
// reconciled every cluster and again after the fixed -settle period.
func BenchmarkHubMemory(b *testing.B) {
	realClusters := []string{"cluster1", "cluster2"}
	if *clusterCount < len(realClusters) {
		b.Fatalf("-clusters %d: need at least %d", *clusterCount, len(realClusters))
	}
	f := benchkit.StartFleet(b, config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}}, realClusters...)
	ctx := b.Context()
	info, _ := f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)
	b.Logf("hub controller: pid %d, %s %s", info.Pid, info.Binary, strings.Join(info.Args, " "))

	for _, c := range realClusters {
		t := benchkit.JoinCluster(ctx, b, f, c)
		b.Logf("joined %s: %s", c, t)
	}
	waitRegistered(ctx, b, f, realClusters)
	m := hubMemory(b, f, info.Pid)
	benchkit.Record(b, "hub RSS, 2 clusters, all reconciled", benchkit.MiB(m.RSS), "")
	settle(ctx, b)
	m2 := hubMemory(b, f, info.Pid)
	benchkit.Record(b, fmt.Sprintf("hub RSS, 2 clusters, after %s settle", *settlePeriod), benchkit.MiB(m2.RSS), ocmHubMemory)

	simulated := make([]string, *clusterCount-len(realClusters))
	for i := range simulated {
		simulated[i] = fmt.Sprintf("sim-%03d", i+1)
	}
	start := time.Now()
	benchkit.StartSimAgents(ctx, b, benchkit.NewSimHub(b, f), simulated)
	all := append(append([]string(nil), realClusters...), simulated...)
	waitRegistered(ctx, b, f, all)
	took := time.Since(start)
	m100 := hubMemory(b, f, info.Pid)
	n := len(all)
	benchkit.Record(b, fmt.Sprintf("%d simulated agents joined → all %d accepted, namespaces, Available", len(simulated), n), benchkit.Seconds(took),
		fmt.Sprintf("%d registering at once", benchkit.SimConcurrency))
	benchkit.Record(b, fmt.Sprintf("hub RSS, %d clusters, all reconciled", n), benchkit.MiB(m100.RSS), "")
	settle(ctx, b)
	m100s := hubMemory(b, f, info.Pid)
	benchkit.Record(b, fmt.Sprintf("hub RSS, %d clusters, after %s settle", n, *settlePeriod), benchkit.MiB(m100s.RSS), "")
	benchkit.Record(b, "hub peak RSS (VmHWM) over the benchmark", benchkit.MiB(m100s.HWM), "")
	b.ReportMetric(float64(m2.RSS)/(1<<20), "rss-2-MiB")
	b.ReportMetric(float64(m100s.RSS)/(1<<20), fmt.Sprintf("rss-%d-MiB", n))
	b.ReportMetric(0, "ns/op")
}

// waitRegistered waits until the hub has reconciled every named cluster:
// HubAcceptedManagedCluster True, its namespace on the hub, and its agent
// reporting Available True.
func waitRegistered(ctx context.Context, b *testing.B, f *benchkit.Fleet, clusters []string) {
	b.Helper()
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("%d clusters accepted with namespaces and Available", len(clusters)), func(ctx context.Context) (bool, error) {
		mcs := &clusterv1.ManagedClusterList{}
		if err := f.HubClient.List(ctx, mcs); err != nil {
			return false, err
		}
		nss := &corev1.NamespaceList{}
		if err := f.HubClient.List(ctx, nss); err != nil {
			return false, err
		}
		ready := map[string]int{}
		for _, mc := range mcs.Items {
			if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) &&
				meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
				ready[mc.Name]++
			}
		}
		for _, ns := range nss.Items {
			if ns.Status.Phase == corev1.NamespaceActive {
				ready[ns.Name]++
			}
		}
		for _, c := range clusters {
			if ready[c] != 2 {
				return false, nil
			}
		}
		return true, nil
	})
}

// settle waits the fixed -settle period before a memory reading, so that
// caches, the garbage collector and the scavenger reach a steady state. It is
// a measurement condition, not synchronization.
func settle(ctx context.Context, b *testing.B) {
	b.Helper()
	b.Logf("settling for %s before the next memory reading", *settlePeriod)
	wait(ctx, b, *settlePeriod)
}

// wait waits d, a measurement period, failing b if ctx ends first.
func wait(ctx context.Context, b *testing.B, d time.Duration) {
	b.Helper()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	}
}

// hubMemory reads the hub controller's memory, failing b if the process is
// no longer pid: a restarted controller would make the readings meaningless.
func hubMemory(b *testing.B, f *benchkit.Fleet, pid int) benchkit.ProcMemory {
	b.Helper()
	if now := f.Pid("hub", config.HubNamespace, benchkit.HubController); now != pid {
		b.Fatalf("the hub controller is now pid %d, not %d: it restarted; see its log %s",
			now, pid, f.Runner.LogPath("hub", config.HubNamespace, benchkit.HubController))
	}
	m, err := benchkit.ReadProcMemory(pid)
	if err != nil {
		b.Fatal(err)
	}
	return m
}
