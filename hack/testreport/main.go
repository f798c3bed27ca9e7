// Command testreport reads `go test -json` on its standard input and prints
// what a plain `go test` run of several packages prints: one line per
// package, and the whole output of each package that failed (every test's
// log, passing or not, as `go test -v` would show it) and of each build that
// failed. When the stream ends it prints the slowest tests and, with -times,
// writes every test's time to a file, so that a slower test shows in review.
//
//	go test -json ./... | go run ./hack/testreport -times _output/test-times.tsv
//
// It exits 1 when a test, a package or a build failed, or when the stream
// ended with a package still running (the go command was killed).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/hack/testreport/turnwait"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// events the go command adds.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// testTime is how long one test ran, and how it ended.
type testTime struct {
	Package, Test, Result string
	Seconds               float64
}

// report folds the events into what is printed.
type report struct {
	out     io.Writer
	output  map[string][]string // package -> its output so far
	waited  map[string]float64  // "package test" -> seconds it waited for its turn
	done    map[string]bool     // packages that ended
	times   []testTime
	failed  bool
	started []string // packages in the order they started
}

func newReport(out io.Writer) *report {
	return &report{out: out, output: map[string][]string{}, waited: map[string]float64{}, done: map[string]bool{}}
}

func (r *report) add(e event) {
	switch e.Action {
	case "build-output":
		// A build's errors, printed as they come, as go test does.
		fmt.Fprint(r.out, e.Output)
		return
	case "build-fail":
		r.failed = true
		return
	}
	if e.Package == "" {
		return
	}
	if _, ok := r.output[e.Package]; !ok {
		r.output[e.Package] = nil
		r.started = append(r.started, e.Package)
	}
	switch e.Action {
	case "output":
		r.output[e.Package] = append(r.output[e.Package], e.Output)
		if waited, ok := turnwait.Parse(e.Output); ok && e.Test != "" {
			r.waited[e.Package+" "+e.Test] = waited
		}
	case "pass", "fail", "skip":
		if e.Test != "" {
			// A test that waited for its turn (turnwait) ran from its turn.
			r.times = append(r.times, testTime{Package: e.Package, Test: e.Test, Result: e.Action, Seconds: e.Elapsed - r.waited[e.Package+" "+e.Test]})
			if e.Action == "fail" {
				r.failed = true
			}
			return
		}
		r.done[e.Package] = true
		lines := r.output[e.Package]
		delete(r.output, e.Package)
		if e.Action == "fail" {
			r.failed = true
			for _, l := range lines {
				fmt.Fprint(r.out, l)
			}
			return
		}
		// A package that passed: only its summary line ("ok", or "?" for
		// one without tests).
		for _, l := range lines {
			if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?   ") || strings.HasPrefix(l, "ok\t") {
				fmt.Fprint(r.out, l)
			}
		}
	}
}

// finish prints what packages that never ended wrote, and the slowest tests.
func (r *report) finish(top int) {
	for _, p := range r.started {
		if r.done[p] {
			continue
		}
		r.failed = true
		fmt.Fprintf(r.out, "testreport: %s did not end (the go command stopped); its output:\n", p)
		for _, l := range r.output[p] {
			fmt.Fprint(r.out, l)
		}
	}
	slow := r.slowest(top)
	if len(slow) == 0 {
		return
	}
	fmt.Fprintf(r.out, "\nslowest tests (tests side by side overlap):\n")
	for _, t := range slow {
		fmt.Fprintf(r.out, "  %7.1fs  %-4s  %s  %s\n", t.Seconds, t.Result, shortPackage(t.Package), t.Test)
	}
}

// slowest returns up to n top-level tests, longest first.
func (r *report) slowest(n int) []testTime {
	var tops []testTime
	for _, t := range r.times {
		if !strings.Contains(t.Test, "/") {
			tops = append(tops, t)
		}
	}
	sort.SliceStable(tops, func(i, j int) bool { return tops[i].Seconds > tops[j].Seconds })
	if len(tops) > n {
		tops = tops[:n]
	}
	return tops
}

// writeTimes writes every test's time, subtests too, longest first, as
// tab-separated seconds, result, package and test.
func (r *report) writeTimes(file string) error {
	all := append([]testTime(nil), r.times...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Seconds > all[j].Seconds })
	var b strings.Builder
	for _, t := range all {
		fmt.Fprintf(&b, "%.2f\t%s\t%s\t%s\n", t.Seconds, t.Result, t.Package, t.Test)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

// shortPackage drops the module path, keeping the directory.
func shortPackage(p string) string {
	for _, root := range []string{"/test/", "/plugins/", "/controllers/", "/pkg/", "/hack/", "/config"} {
		if i := strings.Index(p, root); i >= 0 {
			return p[i+1:]
		}
	}
	return path.Base(p)
}

func main() {
	times := flag.String("times", "", "write every test's time (seconds, result, package, test; tab-separated, longest first) to this file")
	top := flag.Int("top", 15, "how many of the slowest top-level tests to print at the end")
	flag.Parse()
	r := newReport(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event: the go command's own messages (a package
			// pattern that matched nothing, a module download).
			fmt.Fprintf(os.Stdout, "%s\n", line)
			continue
		}
		r.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: reading go test -json: %v\n", err)
		r.failed = true
	}
	r.finish(*top)
	if *times != "" {
		if err := r.writeTimes(*times); err != nil {
			fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
		}
	}
	if r.failed {
		os.Exit(1)
	}
}
