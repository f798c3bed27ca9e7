package framework

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
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
//
// The binary is linked once for every test package of a run: each package
// and set of flags has a directory under _output/test-bin where `go build`
// keeps its output, and the go command links again only when that output is
// stale (its build ID no longer matches the sources and flags), which takes a
// second where a link takes several of CPU. out gets a copy, so that a later
// build in another test package never changes a binary that a test runs.
func Build(out, pkg string, buildFlags ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	name := filepath.Base(pkg)
	if strings.HasSuffix(out, "/") {
		out = filepath.Join(out, name)
	}
	flags := append(append([]string{}, raceBuildFlags...), buildFlags...)
	sum := sha256.Sum256([]byte(strings.Join(append([]string{pkg}, flags...), "\x00")))
	bins := filepath.Join(root, "_output", "test-bin")
	pruneBuilds.Do(func() { pruneStale(bins, time.Now().Add(-staleBuild)) })
	dir := filepath.Join(bins, hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The directory's time is its last use, for pruneStale.
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil {
		return err
	}
	// Packages run in processes of their own: the lock keeps two of them
	// from writing the same output at once.
	unlock, err := lockPath(filepath.Join(dir, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	built := filepath.Join(dir, name)
	args := append([]string{"build", "-o", built}, flags...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
	}
	return copyExecutable(built, out)
}

// staleBuild is how long a binary of Build stays unused before a later test
// process removes it: the flags of some builds (a version stamp) change from
// commit to commit, and each binary is about 100 MB.
const staleBuild = 24 * time.Hour

var pruneBuilds sync.Once

// pruneStale removes the directories under dir last used before cutoff.
func pruneStale(dir string, cutoff time.Time) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && info.ModTime().Before(cutoff) {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// lockPath takes an exclusive lock on the file path, creating it, and
// returns its release.
func lockPath(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// copyExecutable copies the executable src to dst through a temporary file
// beside dst, so that dst is never seen half written.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
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
