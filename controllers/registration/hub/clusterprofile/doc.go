// Package clusterprofile exports the hub's ManagedClusters as ClusterProfiles
// of the SIG-Multicluster Cluster Inventory API (multicluster.x-k8s.io/v1alpha1):
// every namespace a ManagedClusterSet is bound to gets one ClusterProfile per
// member cluster, named after the cluster, which consumers of that namespace
// (Kueue MultiKueue, Argo CD, fleet tooling) read instead of OCM's own API.
package clusterprofile
