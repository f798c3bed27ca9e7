// Package agent is the work agent: it applies the ManifestWorks of its
// managed cluster's namespace on the hub to the managed cluster, reports
// their status back, records what it applied in AppliedManifestWorks and
// removes it again as each ManifestWork's deleteOption says.
//
// The agent meets the registration agent only through the hub credential
// Secret (hub-kubeconfig-secret in its namespace, watched by pkg/hubsession,
// as the add-on agent does): it waits until the Secret
// exists, then runs a hub session (a cache of the ManifestWorks in the cluster
// namespace and the ManifestWork controller) with that credential, and
// replaces the session whenever the Secret changes, as it does when the
// client certificate is rotated. The AppliedManifestWork controller works on
// the managed cluster alone and keeps running across sessions.
//
// Each session watches the objects the works applied (watcher.go): one
// metadata-only informer per resource some work uses, started with the first
// work that applies that resource and stopped with the last, reacting only to
// objects owned by an AppliedManifestWork of the hub (and to the objects of
// ReadOnly or orphaned manifests). A change brings the owning work back to
// the controller within milliseconds (paced per work), which re-reads the
// objects, reports their status feedback (feedback.go) and the conditions of
// their condition rules (conditionrules.go: CEL and WellKnownConditions,
// aggregated into work-level conditions), and writes the work's status in a
// single patch when it changed. A manifest whose Complete condition is True
// is frozen (neither applied nor read again), and a work whose manifests
// with a Complete rule all completed gets Complete and is left alone.
//
// A new work costs three round trips in sequence: the hub finalizer and the
// AppliedManifestWork (whose UID every owned object references) are written
// at once; each object the AppliedManifestWork does not list yet is created
// without a read first (a create that finds it existing falls back to read
// and update); then the work's status on the hub and the
// AppliedManifestWork's record of the applied objects are written at once.
// Nothing is applied before the finalizer is on the hub.
//
// The same events restore drift (manifestwork_drift.go): an object of an
// Update or ServerSideApply manifest edited or deleted on the managed cluster
// is applied again at once, and the drift is recorded as a Warning Event on
// the ManifestWork (through the hub credential) and as the manifest's Drifted
// condition (ResourceModified or ResourceDeleted, naming the object, the
// fields and the time). CreateOnly and ReadOnly objects are reported, not
// restored. The agent's own writes never count: drift is an apply at an
// unchanged generation that had to write, compared against the manifest, so
// status-only changes are not drift.
//
// A work with an executor ServiceAccount (executor.go) is applied only as
// far as that ServiceAccount may: before each manifest is written, and before
// an object the work no longer lists is deleted, SubjectAccessReviews on the
// managed cluster ask whether it may use the verbs the apply needs (get, and
// create, update or patch; delete). A denied manifest fails alone with a
// message naming the ServiceAccount, verbs and object; the work is tried
// again after a minute (Options.ExecutorRetryInterval) without counting as a
// failure, and answers are cached for up to 10 s. A Role, ClusterRole,
// RoleBinding or ClusterRoleBinding is also written first with dryRun as the
// ServiceAccount (executor_escalation.go), so that the API server's RBAC
// escalation check decides whether it may grant what the object grants.
//
// Feedback rules of feedbackScrapeType Poll (the API default) add a read of
// the work every Options.StatusSyncInterval to the watches; Watch relies on
// the watches alone.
//
// The AppliedManifestWork controller also evicts records of works gone from
// the hub (appliedmanifestwork_eviction.go): while a session is connected,
// it sets evictionStartTime on a record of this agent whose ManifestWork is
// missing (or that belongs to another hub) and deletes it, with the objects
// it owns, once Options.EvictionGracePeriod has passed; a work that comes
// back clears evictionStartTime.
//
// In Hosted mode (Options.ManagedKubeconfigSecret) the agent runs on a
// hosting cluster and reaches the managed cluster with the kubeconfig in that
// Secret (kubeconfig.ManagedCluster): manifests, AppliedManifestWorks and their finalizer
// controller, the watches of applied objects and the executors'
// SubjectAccessReviews all use it, as the identity the user provided; the
// hub credential Secret, leader election and the Secret itself stay on the
// hosting cluster.
//
// Applying itself (kind order, update strategies, owner references,
// deletion) lives in the apply subpackage.
package agent
