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
	stepTimeout = flag.Duration("op-timeout", 20*time.Minute,
		"Upper bound of every wait of one step (registration, rollout, restart) before the run fails.")
)

func TestMain(m *testing.M) { os.Exit(benchkit.Main(m, "Scale")) }
