// Package managedcluster reconciles the hub administrator's half of the double
// opt-in: when spec.hubAcceptsClient is true it creates the cluster namespace
// and grants the cluster's agent identity access to that namespace and to its
// own ManagedCluster; when it turns false it takes those grants back; and when
// the ManagedCluster is deleted it removes what the cluster left on the hub, in
// order, before letting the ManagedCluster go.
package managedcluster
