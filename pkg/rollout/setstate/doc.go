// Package setstate reads the rollout of a ManifestWorkReplicaSet as a hub
// user sees it: the set, its revisions, its RolloutApprovals, its
// placements' decisions and its ManifestWorks, from which it computes the
// rollout of the current revision as the hub controller does (pkg/rollout)
// and reports its state, its stages and its history. `kubectl ocm work
// rollout` (plugins/work/rollout) and `kubectl ocm mcp` both read it here, as
// kubectl's rollout verbs read theirs through its polymorphic helpers.
package setstate
