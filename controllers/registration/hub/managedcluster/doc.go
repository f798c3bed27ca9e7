// Package managedcluster reconciles the hub administrator's half of the double
// opt-in: when spec.hubAcceptsClient is true it creates the cluster namespace
// and grants the cluster's agent identity access to that namespace, and to
// its own certificate requests while it has some (what an agent does with its
// own ManagedCluster, every agent holds through one shared binding, held to
// its own cluster by admission: docs/design/authorization.md); when it turns
// false it takes those grants back; and when the ManagedCluster is deleted it
// removes what the cluster left on the hub, in order, before letting the
// ManagedCluster go.
package managedcluster
