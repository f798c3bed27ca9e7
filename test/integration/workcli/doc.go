// Package workcli tests `kubectl ocm work` (create, get, status, delete) and
// the hub's ManifestWork admission policies against a real hub API server.
// There is no work agent: the tests write ManifestWork status as the hub
// admin where the agent would. The tests start control planes and are skipped
// under `go test -short`.
package workcli
