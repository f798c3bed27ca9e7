package placement

import (
	"flag"
	"os"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmark, passed after -args (see test/bench/README.md).
var (
	clusterCount   = flag.Int("clusters", 1000, "ManagedClusters (each with an AddOnPlacementScore)")
	placementCount = flag.Int("placements", 1000, "placements of the large phase, numberOfClusters 10 each")
	smallCount     = flag.Int("small-placements", 100, "placements of the small phase, numberOfClusters 1 each")
	labelChanges   = flag.Int("label-changes", 5, "cluster label changes timed to updated decisions")
	concurrency    = flag.Int("concurrency", 16, "creates in flight at once when creating clusters, scores and placements")
	sliceCount     = flag.Int("slices", 100, "values of the slice label the placements of BenchmarkPlacementsAtScale select by")
	churnRate      = flag.Float64("churn-rate", 20, "cluster operations per second (creates and re-labels in turn) while BenchmarkPlacementsAtScale creates its placements")
	churnOps       = flag.Int("churn-ops", 10, "cluster operations of each kind (re-label, create, taint) counted one at a time for reconciles per cluster event")
)

// TestMain runs the tests and benchmarks through benchkit.Main, which prints
// the summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Placement"))
}
