// Package benchkit is the harness shared by the benchmark packages under
// test/bench (registration and work): it builds ocm-controller from this
// source tree, starts a fleet of real local control planes from
// test/framework with the hub installed from config/hub, joins and accepts
// managed clusters exactly as `kubectl ocm join` and `kubectl ocm accept` do,
// polls, reads a process's memory and CPU time from /proc, and collects the
// figures of a run into the summary table printed at its end.
//
// Nothing here asserts anything about speed; see test/bench/README.md.
package benchkit
