// Package clusterset maintains cluster sets on the hub: it keeps the
// `default` and `global` ManagedClusterSets in place, puts every
// ManagedCluster without a set into `default`, reports how many clusters each
// set selects (ClusterSetEmpty) and whether each ManagedClusterSetBinding's
// set exists (Bound).
package clusterset
