// Package placementcli tests `kubectl ocm clusterset`, `kubectl ocm
// placement` and `kubectl ocm work create|get|delete --placement/--replicaset`
// against a real hub API server. No hub controller runs: the hub admin
// creates ManagedClusters, PlacementDecisions and ManifestWork status where
// the agents and controllers would, which also lets `placement explain` show
// that the written decisions lag behind the scheduling rules. The tests start
// a control plane and are skipped under `go test -short`.
package placementcli
