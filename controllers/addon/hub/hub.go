// Package hub is the hub's add-on manager: it installs add-ons on the
// clusters their ClusterManagementAddOns select, resolves and rolls out their
// configurations, deploys template add-ons through ManifestWorks, approves
// their agents' certificate requests and reports their health. Each concern
// is one reconciler in a subpackage; docs/design/addon.md fixes which fields
// each one writes.
package hub

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
)

// ControllerName names the add-on manager in logs and events.
const ControllerName = "addon-manager"

// Options configure the add-on manager.
type Options struct{}

// The events of the add-on reconcilers.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers every add-on manager reconciler with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	_ = opts
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", r, err)
		}
	}
	return nil
}
