// Package workttl deletes a ManifestWork from the hub once it has been
// Complete for spec.deleteOption.ttlSecondsAfterFinished seconds, as OCM's
// CleanUpCompletedManifestWork does. ManifestWorks created by a
// ManifestWorkReplicaSet are left to their replica set.
package workttl
