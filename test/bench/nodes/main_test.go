package nodes

import (
	"os"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

func TestMain(m *testing.M) {
	os.Exit(benchkit.Main(m, "Nodes"))
}
