// Package hub tests the ClusterManager operator (`ocm-controller operator
// hub`) on a real hub: the component runner runs the operator Deployment
// that `kubectl ocm hub init` writes, and the hub controller Deployment the
// operator renders from the ClusterManager. Applying only the operator and
// the ClusterManager installs the hub; each live edit of the ClusterManager
// is one subtest; a hub controller that stops turns the conditions false
// with its cause; deleting the ClusterManager removes the hub, refusing
// while ManagedClusters remain unless forced.
package hub
