package scale

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// The shape of KubeFleet's scenario.
const (
	// kfNamespace holds the scenario's placements and rollouts.
	kfNamespace = "kubefleet"
	// sliceLabel splits the fleet into kfSlices slices of equal size; each
	// placement selects one slice by this label.
	sliceLabel = "bench.kubectl-ocm.io/slice"
	kfSlices   = 10
	// stageLabel puts each cluster of a slice into one of kfStages stages,
	// the decision groups the rollouts go through in order.
	stageLabel = "bench.kubectl-ocm.io/stage"
	kfStages   = 3
	// kfConcurrency bounds the harness's creates in flight.
	kfConcurrency = 16
)

// The phases of BenchmarkKubeFleet, keys of KubeFleetReport.Phases.
const (
	PhasePlacements = "placements"
	PhaseRollouts   = "rollouts"
	PhaseResync     = "resync"
)

// KubeFleet's published figures (KubeFleet Performance and Scalability
// Report, Q1 2026: 1,000 member clusters, 1,000 placements, 100 concurrent
// progressive rollouts), as the report's table cites them.
const (
	kubeFleetPlacement = "p90 < 30 s (a placement picking 100 of 1,000 clusters by label)"
	kubeFleetRollout   = "< 2 min (3 stages, not gated, 50 % in-stage concurrency)"
	kubeFleetResync    = "< 15 min (1,000 placements)"
	kubeFleetAgent     = "< 128 MB (member agent)"
	kubeFleetHub       = "8–12 cores, 16–24 GB (hub agent)"
	kubeFleetAPIServer = "10+ cores, 30+ GB"
	kubeFleetStorage   = "≈ 2 GB of objects in etcd"
)

// KubeFleetReport holds the figures of BenchmarkKubeFleet.
type KubeFleetReport struct {
	// Machine describes where they were measured.
	Machine string `json:"machine"`
	// Clusters, Placements and Rollouts are the scenario's size;
	// Simulated is how many of the clusters had simulated agents.
	Clusters   int `json:"clusters"`
	Simulated  int `json:"simulated"`
	Placements int `json:"placements"`
	Rollouts   int `json:"rollouts"`
	// RegisterSeconds is how long the fleet took to register.
	RegisterSeconds float64 `json:"registerSeconds"`
	// Placement is each placement's time from its create to its decisions.
	Placement benchkit.Summary `json:"placement"`
	// Stages are each stage's completion times over the rollouts, from a
	// rollout's create to the last cluster of the stage Applied; Rollout
	// the whole rollouts'.
	Stages  []benchkit.Summary `json:"stages"`
	Rollout benchkit.Summary   `json:"rollout"`
	// Propagation is the hub controller's own histogram of the time from a
	// ManifestWork's change to Applied, over the rollouts.
	Propagation benchkit.Summary `json:"propagation"`
	// ResyncSeconds is the time from a hub controller kill to its
	// successor having drained its queues; ResyncAfterLeadSeconds its part
	// after the successor took the lead.
	ResyncSeconds          float64 `json:"resyncSeconds"`
	ResyncAfterLeadSeconds float64 `json:"resyncAfterLeadSeconds"`
	ResyncDetail           string  `json:"resyncDetail"`
	// StorageMiB is the hub API server's view of its etcd database size.
	StorageMiB float64 `json:"storageMiB"`
	// Phases are the CPU, memory and request rates of each phase.
	Phases map[string]Phase `json:"phases"`
}

// Phase is one phase's length, request rates, CPU and memory by process.
type Phase struct {
	Seconds           float64 `json:"seconds"`
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	WritesPerSecond   float64 `json:"writesPerSecond"`
	// Requests are the requests the hub's API server served during the
	// phase by "VERB resource[/subresource]", as Op's.
	Requests map[string]float64 `json:"requests,omitempty"`
	CPUCores map[string]float64 `json:"cpuCores"`
	Memory   map[string]Process `json:"memory"`
	// Profile is the hub API server's CPU over the phase's first
	// KubeFleetProfile, when the phase lasted that long.
	Profile *CPUProfile `json:"profile,omitempty"`
}

// KubeFleetProfile is how long the hub API server's CPU is sampled from
// the start of the rollouts phase.
const KubeFleetProfile = 60 * time.Second

// BucketSummary returns the distribution of a histogram given its bucket
// upper bounds and cumulative counts, each quantile interpolated linearly
// within its bucket as Prometheus' histogram_quantile does; Max is the
// upper bound of the highest bucket that gained an observation.
func BucketSummary(bounds, cumulative []float64) benchkit.Summary {
	if len(bounds) == 0 || len(cumulative) != len(bounds) || cumulative[len(cumulative)-1] <= 0 {
		return benchkit.Summary{}
	}
	total := cumulative[len(cumulative)-1]
	q := func(p float64) float64 {
		rank := p * total
		for i, c := range cumulative {
			if c >= rank {
				lower, below := 0.0, 0.0
				if i > 0 {
					lower, below = bounds[i-1], cumulative[i-1]
				}
				if c == below {
					return bounds[i]
				}
				return lower + (bounds[i]-lower)*(rank-below)/(c-below)
			}
		}
		return bounds[len(bounds)-1]
	}
	top := 0.0
	for i, c := range cumulative {
		if i == 0 && c > 0 || i > 0 && c > cumulative[i-1] {
			top = bounds[i]
		}
	}
	return benchkit.Summary{Count: int(total), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: top}
}

// Table is the report side by side with KubeFleet's figures: rows of
// figure, KubeFleet, ours.
func (r *KubeFleetReport) Table() [][]string {
	rows := [][]string{
		{fmt.Sprintf("Placement, create → decisions (%d of %d clusters by label, 3 decision groups)", r.Clusters/kfSlices, r.Clusters), kubeFleetPlacement, r.Placement.String()},
	}
	for i, s := range r.Stages {
		rows = append(rows, []string{fmt.Sprintf("Rollout stage %d complete, from the rollout's create", i+1), "", s.String()})
	}
	rows = append(rows,
		[]string{"Whole 3-stage rollout, half a stage at a time", kubeFleetRollout, r.Rollout.String()},
		[]string{"Propagation, ManifestWork change → Applied (hub metric)", "", r.Propagation.String()},
		[]string{"Full resync after a hub controller restart", kubeFleetResync,
			fmt.Sprintf("%.1f s (%.1f s after the successor took the lead)", r.ResyncSeconds, r.ResyncAfterLeadSeconds)},
	)
	peak := func(proc string) (rss, cores float64) {
		for _, p := range r.Phases {
			rss = max(rss, p.Memory[proc].PeakMiB)
			cores = max(cores, p.CPUCores[proc])
		}
		return rss, cores
	}
	for _, x := range []struct{ name, proc, theirs string }{
		{"Agent of a real managed cluster, peak memory / busiest phase's CPU", ProcAgent, kubeFleetAgent},
		{"Hub controller, peak memory / busiest phase's CPU", ProcHubController, kubeFleetHub},
		{"Hub API server, peak memory / busiest phase's CPU", ProcAPIServer, kubeFleetAPIServer},
		{"etcd, peak memory / busiest phase's CPU", ProcEtcd, ""},
		{fmt.Sprintf("The %d simulated agents (one process), peak memory / busiest phase's CPU", r.Simulated), ProcSimAgents, ""},
	} {
		rss, cores := peak(x.proc)
		rows = append(rows, []string{x.name, x.theirs, fmt.Sprintf("%.0f MiB, %.2f cores", rss, cores)})
	}
	rows = append(rows, []string{"etcd database (hub API server's view)", kubeFleetStorage, fmt.Sprintf("%.0f MiB", r.StorageMiB)})
	return rows
}

// Markdown is the report's table in Markdown.
func (r *KubeFleetReport) Markdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "KubeFleet's scenario: %d clusters, %d placements, %d concurrent Progressive rollouts of 3 stages. Measured on %s.\n\n",
		r.Clusters, r.Placements, r.Rollouts, r.Machine)
	sb.WriteString("| Figure | KubeFleet (Q1 2026 report, its hardware) | kubectl-ocm (this machine) |\n|---|---|---|\n")
	for _, row := range r.Table() {
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", row[0], cmp.Or(row[1], "—"), row[2])
	}
	return sb.String()
}

// Write writes r as dir/kubefleet.json and dir/kubefleet.md.
func (r *KubeFleetReport) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubefleet.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kubefleet.md"), []byte(r.Markdown()), 0o644)
}
