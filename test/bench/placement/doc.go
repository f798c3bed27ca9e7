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
// The benchmarks print figures and assert nothing about speed. Everything
// lives in _test.go files and runs only with -bench; the package is skipped
// under -short. test/bench/README.md shows how to run it.
package placement
