package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"io"
)

// KeepDirEnv names the environment variable that, when set to a directory,
// makes StartForTest keep each environment's files (logs, certificates,
// kubeconfig) under it instead of a temporary directory removed at the end.
const KeepDirEnv = "OCM_TEST_KEEP_DIR"

// StartForTest starts an Environment with the named clusters (default "hub")
// for t and stops it when t ends. It fails t with the cause when the
// environment cannot start, e.g. when the Kubernetes binaries are not built.
// Tests that start control planes are the slow tier: callers skip them under
// `go test -short` with SkipIfShort.
func StartForTest(t testing.TB, clusters ...string) *Environment {
	t.Helper()
	return StartForTestWith(t, Options{Clusters: clusters})
}

// StartForTestWith is StartForTest with the clusters and settings of opts;
// it sets opts.Log and opts.Dir itself.
func StartForTestWith(t testing.TB, opts Options) *Environment {
	t.Helper()
	quietControllerRuntime()
	opts.Log = testWriter{t}
	if keep := os.Getenv(KeepDirEnv); keep != "" {
		opts.Dir = filepath.Join(keep, testDirName(t))
	} else {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start test environment: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("environment files (logs, kubeconfig) were in %s; set %s=<dir> to keep them", env.Dir(), KeepDirEnv)
		}
		if err := env.Stop(); err != nil {
			t.Errorf("stop test environment: %v", err)
		}
	})
	return env
}

// BuildForTest builds the main package pkg, a path relative to the
// repository root such as "./controllers/cmd/ocm-controller", into a
// temporary directory of t as name, and returns the binary's path. It fails t
// with the compiler's output if the build fails. buildFlags go to `go build`
// before the package, such as version.StampFlags("v0.7.1").
func BuildForTest(t testing.TB, pkg, name string, buildFlags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if err := Build(bin, pkg, buildFlags...); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Build builds the main package pkg, a path relative to the repository root,
// into the file out (or, when out ends in a slash, into that directory under
// the package's name); buildFlags go to `go build` before the package, after
// -race when the test runs with the race detector. The error carries the
// compiler's output.
func Build(out, pkg string, buildFlags ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	args := append([]string{"build", "-o", out}, raceBuildFlags...)
	cmd := exec.Command("go", append(append(args, buildFlags...), pkg)...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
	}
	return nil
}

// SkipIfShort skips t under `go test -short`, the fast tier that starts no
// control planes.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real control planes; skipped with -short")
	}
}

// testWriter sends environment progress lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// quietControllerRuntime gives controller-runtime's global logger a sink
// that drops everything, once: the clients and caches of tests and of the
// component runner log through it, and without a sink it prints a warning
// with a stack trace into the test log. Controllers under test log through
// the loggers their managers are given.
var quietControllerRuntime = sync.OnceFunc(func() { ctrllog.SetLogger(logr.Discard()) })

// TestLogWriter returns a writer that sends what is written to it to t's
// log, a line at a time, as the framework's own progress lines go.
func TestLogWriter(t testing.TB) io.Writer { return testWriter{t} }
