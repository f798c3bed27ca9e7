// Package rollout decides, from the clusters a placement selected and the
// state of what was already rolled out to each, which clusters to update
// next under a RolloutStrategy (All, Progressive, ProgressivePerGroup). It is
// shared by the ManifestWorkReplicaSet controller, the add-on manager and
// setstate, through which `kubectl ocm work rollout` and `kubectl ocm mcp`
// read a set's rollout.
package rollout
