// Package scale is the scale harness: BenchmarkScale grows one hub to
// thousands of registered clusters in steps, two of them joined by real
// agents and the rest by simulated agents that speak the real protocol, and
// at each step measures the hub's idle cost and a set of operations over the
// whole fleet. It writes the figures of every step as JSON and CSV and plots
// them as SVG (see results.go and plot.go, and test/bench/README.md).
//
// Run it with `make bench-scale` (SCALE_STEPS=100,500 for a quick check).
package scale
