package registration

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmarks, passed after -args (see test/bench/README.md).
var (
	joinRuns         = flag.Int("joins", 5, "BenchmarkJoinToAvailable and BenchmarkJoinToAvailableToken: number of fresh joins of cluster1")
	leaseSeconds     = flag.Int("lease-seconds", 10, "BenchmarkLeaseExpiry: spec.leaseDurationSeconds set on cluster1; BenchmarkHubCARotation: on every cluster")
	rotationClusters = flag.Int("rotation-clusters", 3, "BenchmarkHubCARotation: clusters joined before the hub's CAs rotate")
	idlePeriod       = flag.Duration("idle", time.Minute, "BenchmarkLeaseExpiry: idle period over which writes are counted (at least 3 lease durations)")
	clusterCount     = flag.Int("clusters", 100, "BenchmarkHubMemory: registered clusters in the second reading (2 real agents, the rest simulated)")
	settlePeriod     = flag.Duration("settle", 30*time.Second, "BenchmarkHubMemory, BenchmarkAgentSideMemory: fixed settle period before each settled memory reading")
)

// TestMain runs the tests and benchmarks through benchkit.Main, which prints
// the summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Registration"))
}
