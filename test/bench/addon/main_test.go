package addon

import (
	"flag"
	"os"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// Knobs of the benchmarks, passed after -args (see test/bench/README.md).
var (
	clusterCount       = flag.Int("clusters", 50, "managed clusters the add-on is enabled on (2 with real agents, the rest simulated)")
	addonCount         = flag.Int("addons", 10, "BenchmarkAddonRegistration: copies of the example add-on enabled on every cluster, each with its own agent and hub registration")
	registrationDriver = flag.String("driver", "csr", "BenchmarkAddonRegistration: how the real agents obtain the add-ons' hub credentials, csr or token")
	configChanges      = flag.Int("config-changes", 2, "BenchmarkAddonConfigRollout: changes of the default AddOnDeploymentConfig rolled out after the first one is set")
)

// TestMain runs the tests and benchmarks through benchkit.Main, which prints
// the summary table of every figure at the end of the run.
func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Add-on"))
}
