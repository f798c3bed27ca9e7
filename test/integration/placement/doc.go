// Package placement tests the hub's placement scheduler against a real hub
// kube-apiserver: the scheduler runs as the shipped ocm-hub-controller
// ServiceAccount with the RBAC of config/hub, the hub admin creates the
// ManagedClusters, sets, bindings, scores and placements directly (no
// agents), and every scheduling rule is checked through the PlacementDecisions
// and status the scheduler writes. The mirror of the decisions into
// KEP-5313's multicluster.x-k8s.io PlacementDecisions runs beside it, and a
// hub user granted only their reading checks it as a third-party consumer.
package placement
