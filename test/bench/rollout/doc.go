// Package rollout benchmarks the fleet-wide operations on
// ManifestWorkReplicaSets that a user drives by hand on real local control
// planes from test/framework: staged rollouts held at gates and opened by
// `kubectl ocm work rollout approve`, `kubectl ocm work rollout undo`, and
// `kubectl ocm work diff` across every cluster of a set. The hub runs
// `ocm-controller hub`, built from this source tree and run by the component
// runner as its shipped ServiceAccount; the CLI runs in process through the
// plugin's root command.
//
// The clusters are simulated by benchkit.SimAgent: each registers with the
// real protocol and its own certificate identity. In the rollout benchmarks
// they acknowledge their ManifestWorks as a work agent would; in the diff
// benchmark each cluster's works are served by the real work agent
// (controllers/work/agent) in process, all applying to one shared managed
// API server (benchkit.StartWorkAgents), so that every diff is computed by
// the product's own dry runs.
//
// The benchmarks print figures and assert nothing about speed:
//
//   - BenchmarkApproveToNextStage: a Progressive rollout cut into stages of
//     -stage-size clusters, each gated Before; for each stage, from the
//     RolloutApproval's creation (approve run as a user holding only the
//     shipped rollout-approver role) to the stage's first work updated on
//     the hub, its first work Applied and the whole stage Applied.
//   - BenchmarkUndo: revision 1, then 2, then `work rollout undo`, with
//     strategy All and Progressive; from the undo to every work back at
//     revision 1 and Applied, and to the set's rollout Complete.
//   - BenchmarkDiffReports: `work diff --replicaset` over every cluster;
//     each cluster's report latency (its ReportDiff work created → its
//     DiffReported condition), the time until every report is in and until
//     the command returns.
//
// Everything runs only with -bench, and the benchmarks are skipped under
// -short; plain `go test` runs the unit tests of the package's own logic.
// test/bench/README.md shows how to run them.
package rollout
