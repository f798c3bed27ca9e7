package scale

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// The harness's knobs, given after -args (see test/bench/README.md).
var (
	steps = flag.String("steps", "10,100,500,1000,2000,5000",
		"Comma-separated cluster counts to grow the hub to, in increasing order; each count includes the 2 clusters of real agents. A small first step gives the later steps the slope of the idle writes per cluster.")
	settlePeriod = flag.Duration("settle", 30*time.Second,
		"Fixed period each step is left alone after its clusters registered, before the idle window.")
	idleWindow = flag.Duration("idle", 2*time.Minute,
		"Window over which each step's idle CPU and API request rates are measured; at least one lease duration (60 s) to see every cluster renew.")
	probeLeaseSeconds = flag.Int("probe-lease-seconds", 10,
		"spec.leaseDurationSeconds of each step's probe cluster, whose agent is stopped to time the Unknown detection.")
	outDir = flag.String("out", "",
		"Directory for results.json, results.csv and the SVG plots. Default: _output/bench-scale in the repository.")
	agentsMode = flag.String("agents", agentsProcess,
		"How the simulated agents run: \"process\", all in one sim-agents process sharing one connection and impersonating each cluster's agent (its CPU and memory reported as sim-agents); \"tls\", in the harness's process, each with its own certificate, connection and watches.")
	baselineHubArgs = flag.String("baseline-hub-args", "--kube-api-qps=50 --kube-api-burst=100",
		"Hub controller flags of the baseline rollout: at every step the hub controller restarts with them for one more rollout of type All, then restarts without them, so that the shipped configuration and the baseline are compared on the same fleet. Empty skips the baseline.")
	extraHubArgs = flag.String("hub-args", "",
		"Flags added to the hub controller's at every start, the baseline's included: --profiling serves /debug/pprof on its metrics address, to profile it during a run.")
	kfClusters = flag.Int("kubefleet-clusters", 1000,
		"BenchmarkKubeFleet: clusters of the fleet, the 2 of real agents included.")
	kfPlacements = flag.Int("kubefleet-placements", 1000,
		"BenchmarkKubeFleet: placements, each selecting a tenth of the fleet by label in 3 decision groups.")
	kfRollouts = flag.Int("kubefleet-rollouts", 100,
		"BenchmarkKubeFleet: concurrent Progressive rollouts through the 3 decision groups of the first placements, half a group at a time.")
	hubLeaseDuration = flag.Duration("hub-lease-duration", 15*time.Second,
		"The hub controller's leader election lease (spec.leaderElection.leaseDuration; the renew deadline and retry period in the proportions of 15 s, 10 s and 2 s), set explicitly so that the restart figures stay comparable from run to run. 0 runs the shipped defaults (60 s, 40 s, 2 s), as a run toward 10,000 clusters should.")
	stepTimeout = flag.Duration("op-timeout", 20*time.Minute,
		"Upper bound of every wait of one step (registration, rollout, restart) before the run fails.")
)

// The values of -agents.
const (
	agentsProcess = "process"
	agentsTLS     = "tls"
)

func TestMain(m *testing.M) { os.Exit(benchkit.Main(m, "Scale")) }
