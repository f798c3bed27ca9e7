package benchkit

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"
)

// figure is one row of the summary table printed at the end of the run.
type figure struct {
	// bench names the benchmark that measured it.
	bench string
	// name says what was measured.
	name string
	// value is the measurement with its unit.
	value string
	// context is the reference figure, target or expectation to read it by.
	context string
}

// summary collects the figures of every benchmark of the run.
var summary struct {
	mu   sync.Mutex
	rows []figure
}

// Record adds a figure to the summary table and logs it at once.
func Record(b *testing.B, name, value, context string) {
	b.Helper()
	summary.mu.Lock()
	summary.rows = append(summary.rows, figure{bench: b.Name(), name: name, value: value, context: context})
	summary.mu.Unlock()
	if context != "" {
		b.Logf("%s: %s (%s)", name, value, context)
	} else {
		b.Logf("%s: %s", name, value)
	}
}

// printSummary writes the table of every recorded figure and the wall time of
// the whole run; it writes nothing when no benchmark recorded anything.
func printSummary(w io.Writer, took time.Duration) {
	summary.mu.Lock()
	defer summary.mu.Unlock()
	if len(summary.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s benchmark figures (whole run: %s)\n\n", benchName, took.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tFIGURE\tVALUE\tCONTEXT")
	for _, r := range summary.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.bench, r.name, r.value, r.context)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}

// Quantile returns the q-quantile (0 < q ≤ 1) of xs by the nearest-rank
// method, so that it is always one of the measured values; NaN for no values.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Summary is a distribution of durations in seconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// String prints s's quantiles.
func (s Summary) String() string {
	if s.Count == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %.1f s, p90 %.1f s, p99 %.1f s, max %.1f s (%d)", s.P50, s.P90, s.P99, s.Max, s.Count)
}

// Summarize returns the distribution of xs (Quantile's nearest ranks).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	return Summary{Count: len(xs), P50: Quantile(xs, 0.5), P90: Quantile(xs, 0.9), P99: Quantile(xs, 0.99), Max: slices.Max(xs)}
}

// Seconds formats d in seconds with two decimals.
func Seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// SecondsList formats xs (seconds) as "1.23 0.98 …".
func SecondsList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ") + " s"
}

// MiB formats a byte count in MiB.
func MiB(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
