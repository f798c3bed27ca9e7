// Package agent is the work agent: it applies the ManifestWorks of its
// managed cluster's namespace on the hub to the managed cluster, reports
// their status back, records what it applied in AppliedManifestWorks and
// removes it again as each ManifestWork's deleteOption says. What it
// promises users (names, flags, executors, eviction, feedback, Hosted mode)
// is in docs/design/work.md.
//
// The agent meets the registration agent only through the hub credential
// Secret, watched by pkg/hubsession: each credential runs a hub session
// (session.go: a cache of the cluster namespace's ManifestWorks and the
// ManifestWork controller), replaced when the Secret changes. The
// AppliedManifestWork controller works on the managed cluster alone and
// outlives sessions; it also evicts the records of works gone from the hub
// (appliedmanifestwork_eviction.go).
//
// A session watches the applied objects (watcher.go) with one metadata-only
// informer per resource in use, reacting only to objects of this hub's
// AppliedManifestWorks; a change brings the owning work back to the
// controller (manifestwork_controller.go), which applies it again, restoring
// drift (manifestwork_drift.go), reads status feedback (feedback.go) and
// condition rules (conditionrules.go), and writes the work's status in one
// patch when it changed. A work with an executor is applied only as far as
// its ServiceAccount may (executor.go, executor_escalation.go).
//
// A new work costs three round trips in sequence: the hub finalizer and the
// AppliedManifestWork (whose UID every owned object references) at once;
// the objects, created without a read first; then the work's status and
// the AppliedManifestWork's record of the applied objects at once. Nothing
// is applied before the finalizer is on the hub.
//
// Applying itself (kind order, update strategies, owner references,
// deletion) lives in the apply subpackage.
package agent
