// Package benchkit is the harness shared by the benchmark packages under
// test/bench: it builds ocm-controller (and other binaries, such as an
// add-on's agent) from this source tree, starts a fleet of real local
// control planes from test/framework with the hub installed from config/hub,
// joins and accepts managed clusters exactly as `kubectl ocm join` and
// `kubectl ocm accept` do, registers simulated clusters whose lightweight
// agents speak the real registration protocol (and, when asked, acknowledge
// their ManifestWorks as a work agent would), polls, reads a process's memory
// and CPU time from /proc, and collects the figures of a run into the summary
// table printed at its end.
//
// Nothing here asserts anything about speed; see test/bench/README.md.
package benchkit
