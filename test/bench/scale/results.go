package scale

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// The operations each step times, in the order they run (Op.Name).
const (
	// OpJoin is one more cluster's join → Available, by a simulated agent.
	OpJoin = "join"
	// OpPlacement is a Placement over every cluster → its decisions list
	// every Available cluster.
	OpPlacement = "placement"
	// OpRolloutAll is a ManifestWorkReplicaSet of rollout type All over that
	// placement → every cluster's work Applied.
	OpRolloutAll = "rollout-all"
	// OpRolloutProgressive is the same with type Progressive and
	// maxConcurrency 10 %.
	OpRolloutProgressive = "rollout-progressive-10pct"
	// OpRolloutAllBaseline is OpRolloutAll with the hub controller run
	// with -baseline-hub-args (by default the client limits it shipped
	// with before: 50 requests per second, bursts of 100).
	OpRolloutAllBaseline = "rollout-all-baseline"
	// OpUnknown is one cluster's agent stopped → the hub shows it Unknown.
	OpUnknown = "agent-stopped-unknown"
	// OpHubStop is the hub controller stopped gracefully (SIGTERM: it
	// releases its leader lease) → its successor leads and has drained
	// every work queue.
	OpHubStop = "hub-stop-reconciled"
	// OpHubRestart is the hub controller killed (SIGKILL) → its successor
	// leads and has drained every work queue: everything re-listed and
	// reconciled again.
	OpHubRestart = "hub-restart-reconciled"
	// OpHubRelist is the part of OpHubRestart from the successor taking
	// the lead to its queues drained: the re-list and the reconcile of
	// everything, without the wait for the killed leader's lease.
	OpHubRelist = "hub-relist-reconcile"
)

// OCM's figures the plots draw beside ours.
const (
	// ocmHubRSSMiB is OCM's hub controllers' memory (registration +
	// placement), as test/bench/README.md cites it; no cluster count is
	// published with it.
	ocmHubRSSMiB = 161e6 / (1 << 20)
	// ocmLeaseWritesPerClusterPerSecond is OCM's klusterlet's lease renewal
	// rate at the default 60 s lease: one write per lease duration.
	ocmLeaseWritesPerClusterPerSecond = 1.0 / 60
)

// Results are the figures of one run, a Step per cluster count.
type Results struct {
	// Machine describes where they were measured (CPUs, load).
	Machine string `json:"machine"`
	// Steps are in increasing cluster count.
	Steps []Step `json:"steps"`
}

// Step holds the figures of one cluster count.
type Step struct {
	// Clusters is the number of ManagedClusters registered and Available.
	Clusters int `json:"clusters"`
	// RegisterSeconds is how long the clusters added at this step took to
	// register (ManagedCluster and CSR → accepted, namespace, Available).
	RegisterSeconds float64 `json:"registerSeconds"`
	// Added is how many clusters this step registered.
	Added int `json:"added"`
	// RegisterProfile is where the hub's API server spent its CPU over the
	// first 30 s of the registrations, when they lasted that long.
	RegisterProfile *CPUProfile `json:"apiServerRegisterProfile,omitempty"`

	// IdleSeconds is the length of the idle window the rates and CPU
	// figures below are measured over.
	IdleSeconds float64 `json:"idleSeconds"`
	// Processes holds the memory and CPU of the hub controller, the hub's
	// kube-apiserver and the etcd all clusters share, at the end of the
	// idle window, by process.
	Processes map[string]Process `json:"processes"`
	// IdleRequestsPerSecond is every request the hub's API server served
	// per second, idle; IdleWritesPerSecond the writes among them (create,
	// update, patch, apply, delete); IdleLeaseWritesPerSecond the writes of
	// Leases: the agents' renewals, and the control plane's own leader
	// elections (a fixed rate whatever the fleet's size).
	IdleRequestsPerSecond    float64 `json:"idleRequestsPerSecond"`
	IdleWritesPerSecond      float64 `json:"idleWritesPerSecond"`
	IdleLeaseWritesPerSecond float64 `json:"idleLeaseWritesPerSecond"`
	// IdleRequests is the idle request rate by "VERB resource[/subresource]".
	IdleRequests map[string]float64 `json:"idleRequests"`
	// StorageMiB is the etcd database's size as the hub API server reports
	// it (apiserver_storage_size_bytes) at the end of the idle window.
	StorageMiB float64 `json:"storageMiB"`
	// IdleProfile is where the hub's API server spent its CPU over the
	// idle window.
	IdleProfile *CPUProfile `json:"apiServerIdleProfile,omitempty"`
	// IdleLeaseRenewal is how long the simulated agents' lease renewals
	// took over the idle window, as the agents time them: from the start
	// of a renewal to the hub's answer (one update of the lease; a read
	// too after a conflict), successful renewals only, in seconds. The
	// real agents' are not counted.
	IdleLeaseRenewal benchkit.Summary `json:"idleLeaseRenewal"`
	// OpsLeaseRenewal is the same over the operations (Ops), the hub
	// under load.
	OpsLeaseRenewal benchkit.Summary `json:"opsLeaseRenewal"`

	// Ops are the timed operations, by name (the Op* constants).
	Ops map[string]Op `json:"ops"`
}

// Process is one process's memory and CPU.
type Process struct {
	// RSSMiB is VmRSS, PeakMiB VmHWM, in MiB.
	RSSMiB  float64 `json:"rssMiB"`
	PeakMiB float64 `json:"peakMiB"`
	// IdleCPUCores is the CPU time it used over the idle window divided by
	// the window: 1 is one core busy all the time.
	IdleCPUCores float64 `json:"idleCPUCores"`
}

// Op is one timed operation.
type Op struct {
	// Seconds is how long it took.
	Seconds float64 `json:"seconds"`
	// Detail says what was counted (clusters, decisions, lease).
	Detail string `json:"detail,omitempty"`
	// RequestsPerSecond is every request the hub's API server served per
	// second during it, WritesPerSecond the writes among them, both
	// without the harness's own requests.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	WritesPerSecond   float64 `json:"writesPerSecond"`
	// Requests counts the requests served during it by "VERB
	// resource[/subresource]", the harness's own polls included.
	Requests map[string]float64 `json:"requests,omitempty"`
	// CPUCores is each process's CPU during it, in cores (see
	// Process.IdleCPUCores); a process that restarted within it is absent.
	CPUCores map[string]float64 `json:"cpuCores,omitempty"`
	// Profile is where the hub's API server spent its CPU during it, for
	// the operations the harness profiles.
	Profile *CPUProfile `json:"apiServerProfile,omitempty"`
}

// p99 formats l's 99th percentile for the sizing table: "—" without
// renewals.
func p99(l benchkit.Summary) string {
	if l.Count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f ms", 1000*l.P99)
}

// authorizationShare is the share of p's CPU in authorization, "" without
// a profile.
func authorizationShare(p *CPUProfile) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(p.Shares[ShareAuthorization], 'f', 3, 64)
}

// Processes the harness reads, keys of Step.Processes.
const (
	ProcHubController = "hub-controller"
	ProcAPIServer     = "kube-apiserver"
	ProcEtcd          = "etcd"
	// ProcSimAgents is the simulated agents' own process (-agents process).
	ProcSimAgents = "sim-agents"
	// ProcAgent is the agent of a real managed cluster (cluster1).
	ProcAgent = "agent"
)

// ParseSteps parses the -steps flag: cluster counts, increasing, each at
// least min.
func ParseSteps(s string, min int) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("step %q is not a cluster count", part)
		}
		if n < min {
			return nil, fmt.Errorf("step %d: every step counts at least the %d clusters of real agents", n, min)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("step %d after %d: steps must increase", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no steps: give cluster counts such as 100,500")
	}
	return out, nil
}

// Write writes r as dir/results.json and dir/results.csv (one row per
// step), creating dir.
func (r *Results) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sizing.md"), []byte(r.SizingMarkdown()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.WriteAll(r.table())
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("write results.csv: %w", err)
	}
	return nil
}

// ReadResults reads dir/results.json.
func ReadResults(dir string) (*Results, error) {
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	r := &Results{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	return r, nil
}

// allOps are the operations in the order of the table's columns.
var allOps = []string{OpJoin, OpPlacement, OpRolloutAll, OpRolloutProgressive, OpRolloutAllBaseline, OpUnknown, OpHubStop, OpHubRestart, OpHubRelist}

// table is r as rows of the CSV file and the sizing table: a header, then
// one row per step.
func (r *Results) table() [][]string {
	header := []string{"clusters", "register_s",
		"hub_controller_rss_mib", "hub_controller_mib_per_cluster", "hub_controller_idle_cpu",
		"apiserver_rss_mib", "apiserver_idle_cpu", "etcd_rss_mib", "etcd_idle_cpu", "etcd_db_mib", "sim_agents_rss_mib", "sim_agents_idle_cpu",
		"idle_requests_per_s", "idle_writes_per_s", "idle_lease_writes_per_s", "ocm_lease_writes_per_s",
		"idle_writes_per_cluster_per_min", "marginal_writes_per_cluster_per_min", "ocm_lease_writes_per_cluster_per_min",
		"idle_lease_renewals", "idle_lease_renewal_p50_ms", "idle_lease_renewal_p99_ms", "ops_lease_renewals", "ops_lease_renewal_p99_ms"}
	for _, op := range allOps {
		header = append(header, strings.ReplaceAll(op, "-", "_")+"_s")
	}
	header = append(header, "apiserver_register_authorization_share", "apiserver_idle_authorization_share", "apiserver_rollout_all_authorization_share")
	rows := [][]string{header}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for i, s := range r.Steps {
		marginal := ""
		if m, ok := r.MarginalWritesPerClusterPerMinute(i); ok {
			marginal = f(m)
		}
		hub, api, etcd, sims := s.Processes[ProcHubController], s.Processes[ProcAPIServer], s.Processes[ProcEtcd], s.Processes[ProcSimAgents]
		row := []string{strconv.Itoa(s.Clusters), f(s.RegisterSeconds),
			f(hub.RSSMiB), f(hub.RSSMiB / float64(max(1, s.Clusters))), f(hub.IdleCPUCores),
			f(api.RSSMiB), f(api.IdleCPUCores), f(etcd.RSSMiB), f(etcd.IdleCPUCores), f(s.StorageMiB), f(sims.RSSMiB), f(sims.IdleCPUCores),
			f(s.IdleRequestsPerSecond), f(s.IdleWritesPerSecond), f(s.IdleLeaseWritesPerSecond),
			f(float64(s.Clusters) * ocmLeaseWritesPerClusterPerSecond),
			f(s.IdleWritesPerSecond * 60 / float64(max(1, s.Clusters))), marginal, f(ocmLeaseWritesPerClusterPerSecond * 60),
			strconv.Itoa(s.IdleLeaseRenewal.Count), f(1000 * s.IdleLeaseRenewal.P50), f(1000 * s.IdleLeaseRenewal.P99),
			strconv.Itoa(s.OpsLeaseRenewal.Count), f(1000 * s.OpsLeaseRenewal.P99)}
		for _, op := range allOps {
			if o, ok := s.Ops[op]; ok {
				row = append(row, f(o.Seconds))
			} else {
				row = append(row, "")
			}
		}
		row = append(row, authorizationShare(s.RegisterProfile), authorizationShare(s.IdleProfile), authorizationShare(s.Ops[OpRolloutAll].Profile))
		rows = append(rows, row)
	}
	return rows
}

// MarginalWritesPerClusterPerMinute is what one more cluster adds to the
// hub's idle writes, per minute, between step i-1 and step i: the slope,
// without the fixed writes of the control plane (its own leader
// elections), which the average per cluster includes. False for the first
// step.
func (r *Results) MarginalWritesPerClusterPerMinute(i int) (float64, bool) {
	if i <= 0 || i >= len(r.Steps) {
		return 0, false
	}
	prev, cur := r.Steps[i-1], r.Steps[i]
	if cur.Clusters <= prev.Clusters {
		return 0, false
	}
	return (cur.IdleWritesPerSecond - prev.IdleWritesPerSecond) * 60 / float64(cur.Clusters-prev.Clusters), true
}

// TopRequests returns the n largest entries of rates as "key rate" lines,
// largest first, for the log.
func TopRequests(rates map[string]float64, n int) []string {
	keys := make([]string, 0, len(rates))
	for k := range rates {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case rates[a] > rates[b]:
			return -1
		case rates[a] < rates[b]:
			return 1
		}
		return strings.Compare(a, b)
	})
	out := make([]string, 0, min(n, len(keys)))
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, fmt.Sprintf("%s %.2f", k, rates[k]))
	}
	return out
}

// busiest returns the highest CPU of process proc over step s's idle window
// and operations, in cores, and the operation it was in.
func (s Step) busiest(proc string) (float64, string) {
	cores, during := s.Processes[proc].IdleCPUCores, "idle"
	for _, name := range allOps {
		if c, ok := s.Ops[name].CPUCores[proc]; ok && c > cores {
			cores, during = c, name
		}
	}
	return cores, during
}

// SizingMarkdown is the sizing table of r: per step, each hub process's
// peak memory and its CPU idle and at its busiest, the etcd database, the
// agents' lease renewal p99, and the rollout to every cluster.
func (r *Results) SizingMarkdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Measured on %s.\n\n", r.Machine)
	sb.WriteString("| clusters | hub controller: peak memory, CPU idle / busiest | kube-apiserver: peak memory, CPU idle / busiest | kube-apiserver CPU in RBAC authorization, idle / rollout All | etcd: peak memory, database | lease renewal p99, idle / operations | rollout All (baseline) | hub restart → reconciled |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Steps {
		cell := func(proc string) string {
			cores, during := s.busiest(proc)
			return fmt.Sprintf("%.0f MiB, %.2f / %.2f cores (%s)", s.Processes[proc].PeakMiB, s.Processes[proc].IdleCPUCores, cores, during)
		}
		rollout := "—"
		if op, ok := s.Ops[OpRolloutAll]; ok {
			rollout = fmt.Sprintf("%.1f s", op.Seconds)
			if base, ok := s.Ops[OpRolloutAllBaseline]; ok {
				rollout += fmt.Sprintf(" (%.1f s)", base.Seconds)
			}
		}
		restart := "—"
		if op, ok := s.Ops[OpHubRestart]; ok {
			restart = fmt.Sprintf("%.1f s", op.Seconds)
			if stop, ok := s.Ops[OpHubStop]; ok {
				restart = fmt.Sprintf("%.1f s stopped, %.1f s killed", stop.Seconds, op.Seconds)
			}
		}
		share := func(p *CPUProfile) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprintf("%.0f %%", 100*p.Shares[ShareAuthorization])
		}
		authz := share(s.IdleProfile) + " / " + share(s.Ops[OpRolloutAll].Profile)
		fmt.Fprintf(&sb, "| %d | %s | %s | %s | %.0f MiB, %.0f MiB | %s / %s | %s | %s |\n", s.Clusters, cell(ProcHubController), cell(ProcAPIServer),
			authz, s.Processes[ProcEtcd].PeakMiB, s.StorageMiB, p99(s.IdleLeaseRenewal), p99(s.OpsLeaseRenewal), rollout, restart)
	}
	return sb.String()
}
