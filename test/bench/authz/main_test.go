package authz

import (
	"flag"
	"os"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmark, passed after -args (see test/bench/README.md).
var (
	sizes    = flag.String("sizes", "100,1000,5000", "BenchmarkAgentAuthorization: fleet sizes measured, ascending")
	requests = flag.Int("requests", 2000, "BenchmarkAgentAuthorization: requests of each kind at each size and design")
	rounds   = flag.Int("rounds", 3, "BenchmarkAgentAuthorization: rounds of -requests of each kind; the median round's CPU is reported")
	workers  = flag.Int("workers", 8, "BenchmarkAgentAuthorization: requests in flight at once")
)

// TestMain runs the benchmarks through benchkit.Main, which prints the
// summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Authorization"))
}
