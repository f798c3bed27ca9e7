// Package taint keeps the hub-managed taints of every ManagedCluster in line
// with its availability, so that placements stop selecting clusters that are
// unavailable (cluster.open-cluster-management.io/unavailable) or whose
// health is unknown (cluster.open-cluster-management.io/unreachable).
package taint
