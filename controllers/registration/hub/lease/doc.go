// Package lease judges the health of accepted managed clusters from the
// Lease their registration agent renews in the cluster namespace on the hub:
// it creates the Lease once the cluster is accepted, reports
// ManagedClusterConditionAvailable Unknown when the agent stops renewing it,
// and reports ManagedClusterConditionClockSynced from the renewal times.
package lease
