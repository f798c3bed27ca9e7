// Package versioncli tests `kubectl ocm version` against real API servers: a
// hub and a managed cluster whose hub controller and agent run from an
// ocm-controller binary stamped with a release version under the component
// runner, installed and joined with the plugin's own verbs. It checks that
// the running components report their versions where the plugin reads them,
// and that clusters whose agents report versions outside the supported skew
// are named in a warning. The tests start control planes and are skipped
// under `go test -short`.
package versioncli
