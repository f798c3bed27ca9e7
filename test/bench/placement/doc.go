// Package placement benchmarks the hub's placement scheduler on a real local
// hub from test/framework, with the ocm-controller binary built from this
// source tree and run by the component runner as its shipped
// ServiceAccount, as in the end-to-end tests.
//
// The scenario is OCM's own placement benchmark: 1,000 ManagedClusters in
// one set bound to the benchmark's namespaces, each with an
// AddOnPlacementScore; then
//
//   - 100 placements selecting 1 cluster each, and
//   - 1,000 placements selecting 10 clusters each with prioritizers in Exact
//     mode (the add-on score, ResourceAllocatableCPU and Balance, weight 1),
//
// each timed from the first placement created to every placement's
// decisions written, next to a raw-client lower bound (the same writes by
// the benchmark itself, on copies of the CRDs no controller watches); the
// hub process's memory and CPU time around it; and
// the latency from one cluster label change (which reschedules only the
// placement that selects by labels) and one taint change (which reschedules
// every placement) to the updated decisions.
//
// BenchmarkPlacementsAtScale is the scheduler at scale (issue "Scale: 10,000
// simulated clusters"): -clusters clusters (10,000 for the issue) spread
// over -slices values of a label, and -placements placements each
// selecting one value, created while clusters are created and relabeled
// at -churn-rate; each placement is timed from its create to its first
// decisions (p50, p90, p99 next to KubeFleet's SLO, p90 under 30 s), and the
// scheduler's reconciles (the hub controller's
// controller_runtime_reconcile_total) are counted per cluster re-label,
// creation and taint, one at a time.
//
// The benchmarks print figures and assert nothing about speed. Everything
// lives in _test.go files and runs only with -bench; the package is skipped
// under -short. test/bench/README.md shows how to run it.
package placement
