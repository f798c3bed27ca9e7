// Package hub wires the hub add-on manager into a controller-runtime
// manager: the reconcilers that install, configure, roll out, deploy and
// judge the health of add-ons, and the approver of add-on agents' client
// certificate requests. docs/design/addons.md fixes which fields and
// conditions each of them owns.
//
// Each concern is one reconciler in its own package; this package only holds
// the options they share and SetupWithManager.
package hub
