// Package addoncli tests `kubectl ocm addon` (create, enable, disable, list,
// get and completion) against a real hub API server. No add-on manager
// runs: the tests write the ManagedClusterAddOn and ClusterManagementAddOn
// status, and the finalizers, that the add-on manager and the agents would.
// The tests start control planes and are skipped under `go test -short`.
package addoncli
