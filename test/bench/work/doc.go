// Package work benchmarks work delivery on real local control planes from
// test/framework: a hub and managed clusters, with the ocm-controller binary
// built from this source tree and run by the component runner as its shipped
// ServiceAccount, exactly as the end-to-end tests run it.
//
// The benchmarks print figures and assert nothing about speed:
//
//   - BenchmarkWorkApplied: from a ManifestWork's create returning on the hub
//     to a hub watch delivering it with Applied True, for one-ConfigMap works
//     created one at a time and in bursts, next to the lower bound of a raw
//     client doing the same API round trips; the agent's memory and CPU time
//     at the largest burst.
//   - BenchmarkWorkFeedback: from a Deployment status write on the managed
//     cluster to a hub watch delivering the new value in the ManifestWork's
//     statusFeedback.
//   - BenchmarkWorkDrift: from an edit of an applied ConfigMap on the managed
//     cluster to a watch of that cluster delivering it restored, next to the
//     lower bound of a raw client that watches and writes it back.
//   - BenchmarkWorkLargePayload: a generated large payload written to each
//     cluster's namespace, to Applied, and a second generation.
//   - BenchmarkSetLargePayload: one ManifestWorkReplicaSet of a large
//     payload placed on a fleet (the real clusters and simulated ones whose
//     agents read every chunk through the hub tunnel): the hub's storage
//     against the payload's size, the delivery times and the hub's CPU and
//     memory meanwhile.
//
// Everything lives in _test.go files and runs only with -bench; the package is
// skipped under -short. test/bench/README.md shows how to run it.
package work
