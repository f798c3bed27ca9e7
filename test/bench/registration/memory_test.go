package registration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// ocmHubMemory is OCM's figure to read ours by.
const ocmHubMemory = "OCM: 161 MB (registration + placement hub controllers); target ≤ 80 MB for the whole hub process"

// BenchmarkHubMemory reads the resident memory (VmRSS of /proc/<pid>/status)
// of the ocm-controller hub process with 2 registered clusters, joined by real
// agents, and with -clusters registered clusters, the others joined by
// simulated agents (see simAgent). Each count is read as soon as the hub has
// reconciled every cluster and again after the fixed -settle period.
func BenchmarkHubMemory(b *testing.B) {
	realClusters := []string{"cluster1", "cluster2"}
	if *clusterCount < len(realClusters) {
		b.Fatalf("-clusters %d: need at least %d", *clusterCount, len(realClusters))
	}
	f := startFleet(b, config.HubValues{AutoApproveUsers: []string{simBootstrapUser}}, realClusters...)
	ctx := b.Context()
	info, _ := f.runner.Process("hub", config.HubNamespace, hubController)
	b.Logf("hub controller: pid %d, %s %s", info.Pid, info.Binary, strings.Join(info.Args, " "))

	for _, c := range realClusters {
		t := joinCluster(ctx, b, f, c)
		b.Logf("joined %s: %s", c, t)
	}
	waitRegistered(ctx, b, f, realClusters)
	m := hubMemory(b, f, info.Pid)
	record(b, "hub RSS, 2 clusters, all reconciled", mib(m.rss), "")
	settle(ctx, b)
	m2 := hubMemory(b, f, info.Pid)
	record(b, fmt.Sprintf("hub RSS, 2 clusters, after %s settle", *settlePeriod), mib(m2.rss), ocmHubMemory)

	simulated := make([]string, *clusterCount-len(realClusters))
	for i := range simulated {
		simulated[i] = fmt.Sprintf("sim-%03d", i+1)
	}
	start := time.Now()
	startSimAgents(ctx, b, newSimHub(b, f), simulated)
	all := append(append([]string(nil), realClusters...), simulated...)
	waitRegistered(ctx, b, f, all)
	took := time.Since(start)
	m100 := hubMemory(b, f, info.Pid)
	n := len(all)
	record(b, fmt.Sprintf("%d simulated agents joined → all %d accepted, namespaces, Available", len(simulated), n), seconds(took),
		fmt.Sprintf("%d registering at once", simConcurrency))
	record(b, fmt.Sprintf("hub RSS, %d clusters, all reconciled", n), mib(m100.rss), "")
	settle(ctx, b)
	m100s := hubMemory(b, f, info.Pid)
	record(b, fmt.Sprintf("hub RSS, %d clusters, after %s settle", n, *settlePeriod), mib(m100s.rss), "")
	record(b, "hub peak RSS (VmHWM) over the benchmark", mib(m100s.hwm), "")
	b.ReportMetric(float64(m2.rss)/(1<<20), "rss-2-MiB")
	b.ReportMetric(float64(m100s.rss)/(1<<20), fmt.Sprintf("rss-%d-MiB", n))
	b.ReportMetric(0, "ns/op")
}

// waitRegistered waits until the hub has reconciled every named cluster:
// HubAcceptedManagedCluster True, its namespace on the hub, and its agent
// reporting Available True.
func waitRegistered(ctx context.Context, b *testing.B, f *fleet, clusters []string) {
	b.Helper()
	poll(ctx, b, slowPoll, 5*time.Minute, fmt.Sprintf("%d clusters accepted with namespaces and Available", len(clusters)), func(ctx context.Context) (bool, error) {
		mcs := &clusterv1.ManagedClusterList{}
		if err := f.hubClient.List(ctx, mcs); err != nil {
			return false, err
		}
		nss := &corev1.NamespaceList{}
		if err := f.hubClient.List(ctx, nss); err != nil {
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
	t := time.NewTimer(*settlePeriod)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	}
}

// procMemory is a process's memory as /proc/<pid>/status reports it, in bytes.
type procMemory struct {
	rss uint64 // VmRSS: resident now
	hwm uint64 // VmHWM: peak resident
}

// hubMemory reads the hub controller's memory, failing b if the process is
// no longer pid: a restarted controller would make the readings meaningless.
func hubMemory(b *testing.B, f *fleet, pid int) procMemory {
	b.Helper()
	if now := f.pid("hub", config.HubNamespace, hubController); now != pid {
		b.Fatalf("the hub controller is now pid %d, not %d: it restarted; see its log %s",
			now, pid, f.runner.LogPath("hub", config.HubNamespace, hubController))
	}
	file, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	m, err := parseProcStatus(file)
	if err != nil {
		b.Fatalf("/proc/%d/status: %v", pid, err)
	}
	return m
}

// parseProcStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
func parseProcStatus(r io.Reader) (procMemory, error) {
	var m procMemory
	fields := map[string]*uint64{"VmRSS:": &m.rss, "VmHWM:": &m.hwm}
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		dst, ok := fields[firstOf(parts)]
		if !ok {
			continue
		}
		if len(parts) != 3 || parts[2] != "kB" {
			return m, fmt.Errorf("unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			return m, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		*dst = kb << 10
		found++
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if found != len(fields) {
		return m, fmt.Errorf("no VmRSS or VmHWM line")
	}
	return m, nil
}

// firstOf returns the first element of s, or "".
func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
