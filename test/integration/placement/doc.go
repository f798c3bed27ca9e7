// Package placement tests the hub's placement scheduler against a real hub
// kube-apiserver: the scheduler runs as the shipped ocm-hub-controller
// ServiceAccount with the RBAC of config/hub, the hub admin creates the
// ManagedClusters, sets, bindings, scores and placements directly (no
// agents), and every scheduling rule is checked through the PlacementDecisions
// and status the scheduler writes.
package placement
