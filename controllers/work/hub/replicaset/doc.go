// Package replicaset is the hub's ManifestWorkReplicaSet controller: it rolls
// a ManifestWork template out to the clusters its placements decide, with the
// rollout strategies of pkg/rollout, and reports the per-cluster state.
package replicaset
