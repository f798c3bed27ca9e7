package tunnel

import (
	"os"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

func TestMain(m *testing.M) {
	// The tunnel library logs every connection at Info.
	logrus.SetLevel(logrus.WarnLevel)
	os.Exit(benchkit.Main(m, "Tunnel"))
}
