package scale

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// realClusters are joined by real agents (ocm-controller agent) and stay in
// the fleet at every step.
var realClusters = []string{"cluster1", "cluster2"}

// workNamespace holds the harness's placements and ManifestWorkReplicaSets;
// the global ManagedClusterSet is bound to it.
const workNamespace = "scale"

// BenchmarkScale grows the hub through the -steps cluster counts. At each
// step it registers the new clusters with simulated agents (which renew
// their leases and acknowledge their ManifestWorks), lets the hub settle,
// measures an idle window (memory and CPU of the hub controller, the hub's
// kube-apiserver and etcd; the API requests per second by verb and
// resource), then times the operations (see the Op* constants), each with
// the requests it caused. After every step it writes the results and plots
// to -out, so an interrupted run keeps what it measured.
func BenchmarkScale(b *testing.B) {
	counts, err := ParseSteps(*steps, len(realClusters))
	if err != nil {
		b.Fatalf("-steps: %v", err)
	}
	dir := *outDir
	if dir == "" {
		root, err := framework.RepoRoot()
		if err != nil {
			b.Fatal(err)
		}
		dir = filepath.Join(root, "_output", "bench-scale")
	}
	results := &Results{Machine: machine()}
	hubArgs := newHubArgs(b)
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{
		Values:   config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}, HubLeaderElection: hubLeaderElection(*hubLeaseDuration)},
		Binaries: map[string]string{"ocm-controller": hubArgs.wrapper},
	}, realClusters...)
	ctx := b.Context()
	for _, c := range realClusters {
		b.Logf("joined %s: %s", c, benchkit.JoinCluster(ctx, b, f, c))
	}
	o := newObserver(b, f)
	o.profileDir = dir
	bindGlobalSet(ctx, b, o.c, workNamespace)
	// The probe cluster of every step runs in this process with its own
	// certificate (see joinProbe); the fleet runs in sim-agents with
	// -agents process.
	h := benchkit.NewSimHub(b, f)
	h.ServeWorks = true
	var sims *simProcess
	// leases summarizes the fleet's lease renewals, as its agents timed
	// them, since it was last called.
	leases := h.TakeLeaseLatency
	switch *agentsMode {
	case agentsProcess:
		sims = startSimProcess(b, f)
		o.simPid = sims.pid()
		leases = func() benchkit.Summary { return sims.leaseLatency(b) }
	case agentsTLS:
	default:
		b.Fatalf("-agents %q: want %q or %q", *agentsMode, agentsProcess, agentsTLS)
	}

	registered := len(realClusters)
	for _, n := range counts {
		step := Step{Clusters: n, Added: n - registered, Ops: map[string]Op{}}
		start := time.Now()
		profile := o.profileAPIServer(ctx, registerProfile, fmt.Sprintf("apiserver-cpu-register-%05d.pb.gz", n))
		if sims != nil {
			sims.register(ctx, b, step.Added, o.c)
		} else {
			names := make([]string, 0, step.Added)
			for i := registered; i < n; i++ {
				names = append(names, fmt.Sprintf("sim-%05d", i-len(realClusters)+1))
			}
			benchkit.StartSimAgents(ctx, b, h, names)
		}
		waitAvailable(ctx, b, o.c, n)
		step.RegisterSeconds = time.Since(start).Seconds()
		step.RegisterProfile = keepProfile(b, o, fmt.Sprintf("step %d: registration", n), time.Since(start), registerProfile, profile)
		registered = n
		b.Logf("step %d: registered %d more clusters in %s", n, step.Added, benchkit.Seconds(time.Since(start)))

		pause(ctx, b, *settlePeriod, fmt.Sprintf("settling %s before the idle window", *settlePeriod))
		leases() // the renewals before the idle window are not its own
		measureIdle(ctx, b, o, &step)
		step.IdleLeaseRenewal = leases()
		runOps(ctx, b, o, h, hubArgs, &step)
		step.OpsLeaseRenewal = leases()

		results.Steps = append(results.Steps, step)
		if err := results.Write(dir); err != nil {
			b.Fatalf("write results: %v", err)
		}
		if err := Plot(results, dir); err != nil {
			b.Fatalf("plot: %v", err)
		}
		recordStep(b, results, len(results.Steps)-1)
		b.Logf("step %d: results and plots in %s", n, dir)
	}
	b.ReportMetric(0, "ns/op")
}

// bindGlobalSet creates namespace ns with the global set bound to it.
func bindGlobalSet(ctx context.Context, b *testing.B, c client.Client, ns string) {
	b.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterv1beta2.GlobalClusterSetName},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterv1beta2.GlobalClusterSetName},
	}
	if err := c.Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
}

// availableClusters counts the ManagedClusters the hub accepted whose
// Available condition is True.
func availableClusters(ctx context.Context, c client.Client) (int, error) {
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		conds := list.Items[i].Status.Conditions
		if meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionHubAccepted) &&
			meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionAvailable) {
			n++
		}
	}
	return n, nil
}

// waitAvailable waits until at least n clusters are accepted and Available.
func waitAvailable(ctx context.Context, b *testing.B, c client.Client, n int) {
	b.Helper()
	benchkit.Poll(ctx, b, listPoll(n), *stepTimeout, fmt.Sprintf("%d clusters accepted and Available", n), func(ctx context.Context) (bool, error) {
		got, err := availableClusters(ctx, c)
		return got >= n, err
	})
}

// listPoll is the interval of polls that list every cluster: a list of
// thousands of clusters is itself a load on the hub.
func listPoll(n int) time.Duration {
	return min(5*time.Second, max(benchkit.SlowPoll, time.Duration(n)*time.Millisecond))
}

// pause waits d, a measurement condition (a settle period or an idle
// window), not synchronization.
func pause(ctx context.Context, b *testing.B, d time.Duration, why string) {
	b.Helper()
	b.Log(why)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	}
}

// measureIdle measures step's idle window: requests, CPU and memory.
func measureIdle(ctx context.Context, b *testing.B, o *observer, step *Step) {
	b.Helper()
	w := o.begin(ctx, b)
	profile := o.profileAPIServer(ctx, *idleWindow, fmt.Sprintf("apiserver-cpu-idle-%05d.pb.gz", step.Clusters))
	pause(ctx, b, *idleWindow, fmt.Sprintf("step %d: idle window of %s", step.Clusters, *idleWindow))
	r := o.end(ctx, b, w)
	if p, err := profile(); err != nil {
		b.Errorf("step %d: idle window: %v", step.Clusters, err)
	} else {
		step.IdleProfile = p
		b.Logf("step %d: idle kube-apiserver CPU: %s", step.Clusters, p.Summary())
	}
	step.IdleSeconds = r.seconds
	step.IdleRequestsPerSecond = r.all
	step.IdleWritesPerSecond = r.writes
	step.IdleRequests = r.perSecond()
	step.IdleLeaseWritesPerSecond = step.IdleRequests["PUT leases"] + step.IdleRequests["PATCH leases"] + step.IdleRequests["APPLY leases"]
	step.Processes = o.memory(b)
	storage, err := framework.ScrapeAPIServer(ctx, o.cfg)
	if err != nil {
		b.Fatal(err)
	}
	step.StorageMiB = storage.Sum("apiserver_storage_size_bytes", nil) / (1 << 20)
	for name, cores := range r.cpu {
		p := step.Processes[name]
		p.IdleCPUCores = cores
		step.Processes[name] = p
	}
	b.Logf("step %d: idle requests per second by verb and resource: %s", step.Clusters, strings.Join(TopRequests(step.IdleRequests, 12), ", "))
}

// recordStep adds the main figures of step i of r to the summary table.
func recordStep(b *testing.B, r *Results, i int) {
	b.Helper()
	s := r.Steps[i]
	n := s.Clusters
	hub := s.Processes[ProcHubController]
	benchkit.Record(b, fmt.Sprintf("%d clusters: register %d more", n, s.Added), benchkit.Seconds(time.Duration(s.RegisterSeconds*float64(time.Second))),
		fmt.Sprintf("%.1f clusters/s, %d simulated agents registering at once", float64(s.Added)/s.RegisterSeconds, registerConcurrency()))
	benchkit.Record(b, fmt.Sprintf("%d clusters: hub controller RSS / peak, idle CPU", n),
		fmt.Sprintf("%.1f / %.1f MiB, %.3f cores", hub.RSSMiB, hub.PeakMiB, hub.IdleCPUCores),
		fmt.Sprintf("%.3f MiB per cluster; target ≤ 1 MB per cluster at 5,000", hub.RSSMiB/float64(n)))
	for _, p := range []string{ProcAPIServer, ProcEtcd, ProcSimAgents} {
		if _, ok := s.Processes[p]; !ok {
			continue
		}
		benchkit.Record(b, fmt.Sprintf("%d clusters: %s RSS, idle CPU", n, p), fmt.Sprintf("%.1f MiB, %.3f cores", s.Processes[p].RSSMiB, s.Processes[p].IdleCPUCores), "")
	}
	benchkit.Record(b, fmt.Sprintf("%d clusters: idle hub API requests / writes / lease writes", n),
		fmt.Sprintf("%.2f / %.2f / %.2f per s", s.IdleRequestsPerSecond, s.IdleWritesPerSecond, s.IdleLeaseWritesPerSecond),
		fmt.Sprintf("OCM's lease renewals alone: %.2f lease writes per s (1 per cluster per 60 s lease)", float64(n)*ocmLeaseWritesPerClusterPerSecond))
	if m, ok := r.MarginalWritesPerClusterPerMinute(i); ok {
		benchkit.Record(b, fmt.Sprintf("%d clusters: idle hub writes added per cluster", n), fmt.Sprintf("%.2f per minute", m),
			fmt.Sprintf("slope from %d clusters; OCM: 1 lease write per cluster per minute (60 s lease), plus its status updates", r.Steps[i-1].Clusters))
	}
	benchkit.Record(b, fmt.Sprintf("%d clusters: lease renewal p99 idle / during the operations", n),
		fmt.Sprintf("%.1f / %.1f ms", 1000*s.IdleLeaseRenewal.P99, 1000*s.OpsLeaseRenewal.P99),
		fmt.Sprintf("as the simulated agents time them; %d / %d renewals, max %.1f / %.1f ms",
			s.IdleLeaseRenewal.Count, s.OpsLeaseRenewal.Count, 1000*s.IdleLeaseRenewal.Max, 1000*s.OpsLeaseRenewal.Max))
	for _, name := range allOps {
		op, ok := s.Ops[name]
		if !ok {
			continue
		}
		benchkit.Record(b, fmt.Sprintf("%d clusters: %s", n, name), benchkit.Seconds(time.Duration(op.Seconds*float64(time.Second))),
			fmt.Sprintf("%s; %.1f requests/s, %.1f writes/s; CPU cores %s", op.Detail, op.RequestsPerSecond, op.WritesPerSecond, cpuSummary(op.CPUCores)))
	}
}

// cpuSummary lists cores by process, in a fixed order.
func cpuSummary(cores map[string]float64) string {
	var parts []string
	for _, p := range []string{ProcHubController, ProcAPIServer, ProcEtcd, ProcSimAgents} {
		if c, ok := cores[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", p, c))
		}
	}
	return strings.Join(parts, ", ")
}

// registerConcurrency is how many simulated agents register at once.
func registerConcurrency() int {
	if *agentsMode == agentsProcess {
		return simProcessConcurrency
	}
	return benchkit.SimConcurrency
}

// hubLeaderElection returns the hub controller's timings for lease: none
// (the shipped defaults) for 0, else lease with a renew deadline and retry
// period in the proportions of 15 s, 10 s and 2 s.
func hubLeaderElection(lease time.Duration) config.LeaderElection {
	if lease == 0 {
		return config.LeaderElection{}
	}
	return config.LeaderElection{Timings: leaderelect.Timings{LeaseDuration: lease, RenewDeadline: lease * 10 / 15, RetryPeriod: lease * 2 / 15}}
}
