// Package replicaset tests the hub's work controllers (ManifestWorkReplicaSet
// and the ManifestWork TTL) against a real hub API server: the shipped hub
// manifests are applied as the admin, the controllers run as the shipped
// ocm-hub-controller ServiceAccount, and the tests create Placements and their
// PlacementDecisions themselves (no scheduler) and play the work agent by
// writing ManifestWork conditions.
package replicaset
