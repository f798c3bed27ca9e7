// Package hubversion reports the version of the running hub controller on
// the ClusterManager install record (condition HubControllerVersion), so
// that `kubectl ocm hub status` and users' scripts see it where OCM puts it.
// The ClusterManager operator itself is controllers/operator/clustermanager.
package hubversion
