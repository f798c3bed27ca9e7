package work

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// The unit tests cover the harness's own arithmetic and parsing; they start
// no control planes and run under plain `go test` and -short.

func TestQuantile(t *testing.T) {
	if got := quantile([]float64{5, 1, 4, 2, 3}, 0.5); got != 3 {
		t.Errorf("median = %v, want 3", got)
	}
	if got := quantile([]float64{0.9, 1.4, 1.1}, 0.99); got != 1.4 {
		t.Errorf("p99 of three = %v, want 1.4", got)
	}
	if got := quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile(nil) = %v, want NaN", got)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50 ticks.
	stat := "4242 (ocm (con) troller) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 1000000 5000 18446744073709551615\n"
	got, err := parseProcStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("parseProcStat = %s, want %s", got, want)
	}
	for _, bad := range []string{"no name", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 ten 12"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q): no error", bad)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	got, err := parseProcStatus(strings.NewReader("Name:\tocm-controller\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (procMemory{rss: 40 << 20, hwm: 60 << 20}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStatus(strings.NewReader("Name:\tkthreadd\n")); err == nil {
		t.Error("no error without memory lines")
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("1000, 20,100,20")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{20, 100, 1000}; !slices.Equal(got, want) {
		t.Errorf("parseSizes = %v, want %v", got, want)
	}
	for _, bad := range []string{"x", "0", "-5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q): no error", bad)
		}
	}
}

func TestRunConcurrently(t *testing.T) {
	seen := make([]bool, 50)
	if err := runConcurrently(len(seen), 4, func(i int) error { seen[i] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(seen, false) {
		t.Error("not every index was run")
	}
}
