// Package replicaset tests the ManifestWorkReplicaSet controller against a
// real hub API server: the shipped hub manifests are applied as the admin,
// the controller runs as the shipped ocm-hub-controller ServiceAccount, and
// the tests create Placements and their PlacementDecisions themselves (no
// scheduler) and play the work agent by writing ManifestWork conditions.
package replicaset
