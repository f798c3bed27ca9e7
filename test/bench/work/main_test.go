package work

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmarks, passed after -args (see test/bench/README.md).
var (
	burstSizes    = flag.String("bursts", "20,100,1000", "BenchmarkWorkApplied: sizes of the bursts of one-ConfigMap works, comma-separated; the largest is the one the agent's memory and CPU are read at")
	singleRuns    = flag.Int("singles", 20, "BenchmarkWorkApplied: one-at-a-time works measured before the bursts")
	concurrency   = flag.Int("concurrency", 16, "BenchmarkWorkApplied: creates in flight at once during a burst (OCM work and lower bound alike)")
	clusterCount  = flag.Int("clusters", 2, "managed clusters joined with real agents (1 or 2); works are spread over them")
	feedbackSizes = flag.String("feedback-works", "100,1000", "BenchmarkWorkFeedback: numbers of works (one Deployment each, spread over the clusters) whose status is changed all at once, comma-separated; empty for none")
	hubQPS        = flag.Int("hub-qps", 0, "both: when set, the agents run with --hub-kube-api-qps of this value and --hub-kube-api-burst of twice it (default: the agent's 50 / 100)")
	changeRuns    = flag.Int("changes", 20, "BenchmarkWorkFeedback and BenchmarkWorkDrift: status changes of the Deployment, edits of the ConfigMap measured")
	changeGap     = flag.Duration("change-gap", 250*time.Millisecond, "BenchmarkWorkFeedback and BenchmarkWorkDrift: pause between one change being measured and the next write")
	settlePeriod  = flag.Duration("settle", 30*time.Second, "BenchmarkWorkApplied: fixed settle period before the settled agent memory reading")
)

// TestMain runs the tests and benchmarks through benchkit.Main, which prints
// the summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Work"))
}
