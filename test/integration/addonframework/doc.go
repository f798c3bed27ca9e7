// Package addonframework is the conformance test of the add-on contract an
// add-on manager built with OCM's addon-framework relies on
// (docs/design/addons.md): such a manager, played by the hellomanager
// example's manager (examples/addons/hellomanager/manager), which reads and
// writes the add-on API at v1beta1 and patches each status as the
// framework's patcher does (a JSON merge patch of the status subresource
// carrying a resourceVersion precondition), runs against the hub
// controllers and the agents of this project on real control planes.
//
// It runs both lifecycles (the hub installs and rolls out, or lifecycle self:
// the add-on's own installer creates the ManagedClusterAddOns) on a cluster
// whose agent obtains add-on credentials with the csr driver and on one with
// the token driver, each agent deployed by the manager's ManifestWork and run
// by the component runner, and checks that every add-on turns Available with
// a working hub credential and that no writer keeps rewriting the objects
// once they settled. The tests start control planes, so they are skipped by
// `go test -short`.
package addonframework
