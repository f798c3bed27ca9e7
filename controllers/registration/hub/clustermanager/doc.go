// Package clustermanager reports the state of the hub registration
// controller on the ClusterManager install record, so that `kubectl ocm hub
// status` and users' scripts see it where OCM puts it.
package clustermanager
