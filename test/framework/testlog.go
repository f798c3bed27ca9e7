package framework

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
)

// TestLogger returns the logger of a component a test runs in-process (a
// manager, a webhook, the hub tunnel), named what, at verbosity.
//
// Under `go test -v` it logs into the test log, interleaved with the test's
// own lines. Otherwise (and under `go test -json`, which make test reads) it writes to what's file in the test's directory (the
// one OCM_TEST_KEEP_DIR keeps), and a failed test names the file: a
// failure's message then stands in a short log instead of between hundreds
// of controller lines, which is all a CI excerpt shows.
func TestLogger(t testing.TB, what string, verbosity int) logr.Logger {
	t.Helper()
	if verbose() {
		return testr.NewWithInterface(t, testr.Options{Verbosity: verbosity})
	}
	dir := t.TempDir()
	if keep := os.Getenv(KeepDirEnv); keep != "" {
		dir = filepath.Join(keep, testDirName(t))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("create the directory of the %s's log: %v", what, err)
		}
	}
	path := filepath.Join(dir, strings.ReplaceAll(what, " ", "-")+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("create the %s's log: %v", what, err)
	}
	w := &lineFile{f: f}
	t.Cleanup(func() {
		lines := w.close()
		if t.Failed() {
			t.Logf("the %s logged %d lines to %s; go test -v prints them into the test log, %s=<dir> keeps the file", what, lines, path, KeepDirEnv)
		}
	})
	return funcr.New(w.write, funcr.Options{Verbosity: verbosity})
}

// verbose reports whether the test runs under go test -v. Under go test
// -json the test binary runs with -test.v=test2json, which testing.Verbose
// also reports; there the components' logs go to files as without -v, so
// that the stream make test reads (hack/testreport) stays small.
func verbose() bool {
	if f := flag.Lookup("test.v"); f != nil && f.Value.String() == "test2json" {
		return false
	}
	return testing.Verbose()
}

// testDirName is t's name as one directory name.
func testDirName(t testing.TB) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// lineFile appends timestamped lines to a file until it is closed; lines
// written later, by goroutines that outlive the test, are dropped.
type lineFile struct {
	mu    sync.Mutex
	f     *os.File
	lines int
}

func (w *lineFile) write(prefix, args string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return
	}
	if prefix != "" {
		prefix += " "
	}
	if _, err := fmt.Fprintf(w.f, "%s %s%s\n", time.Now().Format("15:04:05.000"), prefix, args); err == nil {
		w.lines++
	}
}

func (w *lineFile) close() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
	return w.lines
}
