package rollout

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmarks, passed after -args (see test/bench/README.md).
var (
	clusterCount = flag.Int("clusters", 100, "simulated clusters the placement of every benchmark selects; BenchmarkDiffReports runs a real work agent in process for each")
	stageSize    = flag.Int("stage-size", 25, "BenchmarkApproveToNextStage: clusters per stage of the Progressive rollout (annotation rollout.kubectl-ocm.io/stage-size), each stage gated Before")
	undoProgress = flag.String("undo-max-concurrency", "50%", "BenchmarkUndo: maxConcurrency of the Progressive rollout strategy")
	undoAfter    = flag.Duration("undo-after", 5*time.Second, "BenchmarkUndo: pause between revision 2 rolled out and the undo, in which the hub controller's client rate limit refills (bursts of 100), as it has when a user undoes a rollout some time after it; 0 undoes at once")
	diffTimeout  = flag.Duration("diff-timeout", 10*time.Minute, "BenchmarkDiffReports: --timeout of kubectl ocm work diff")
	opTimeout    = flag.Duration("op-timeout", 10*time.Minute, "upper bound of every wait of a benchmark before it fails, naming what it waited for")
)

// TestMain runs the tests and benchmarks through benchkit.Main, which prints
// the summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Rollout"))
}
