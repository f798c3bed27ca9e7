// Package managednamespace copies the fleet namespaces of cluster sets into
// the clusters: for every ManagedCluster, the spec.managedNamespaces of each
// ManagedClusterSet it belongs to (by the exclusive cluster set label or by a
// set's label selector) become its status.managedNamespaces, one entry per
// set and namespace, sorted by set and then namespace, as OCM's hub does. The
// cluster's agent creates the namespaces and reports each one's
// NamespaceAvailable condition in the same entries, which the hub keeps.
package managednamespace
