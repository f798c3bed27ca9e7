// Package hub wires the hub side of cluster registration into a
// controller-runtime manager: accepting and denying ManagedClusters (cluster
// namespace and per-cluster RBAC), approving their client certificate
// requests, judging their health from leases, tainting unhealthy clusters,
// maintaining cluster sets, cleaning up deleted clusters and reporting on the
// ClusterManager.
//
// Each concern is one reconciler in its own package; this package only holds
// the options they share and SetupWithManager.
package hub
