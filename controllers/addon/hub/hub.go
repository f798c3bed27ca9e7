// Package hub is the hub's add-on manager: it installs add-ons on the
// clusters their ClusterManagementAddOns select, resolves and rolls out their
// configurations, deploys template add-ons through ManifestWorks, approves
// their agents' certificate requests and signs those of custom signers,
// keeps the ServiceAccounts of the token driver and reports their health.
// Each concern is one reconciler in a subpackage; docs/design/addons.md fixes
// which fields each one writes.
package hub

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/csr"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/deploy"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/health"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/install"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/signer"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/token"
)

// ControllerName names the add-on manager in logs and events.
const ControllerName = "addon-manager"

// Options configure the add-on manager.
type Options struct {
	// Namespace is the hub controller's own namespace: the custom signers'
	// signingCA Secrets that name no namespace are there.
	Namespace string
}

// The events of the add-on reconcilers.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers every add-on manager reconciler with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	c := mgr.GetClient()
	rec := mgr.GetEventRecorder(ControllerName)
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&install.Reconciler{Client: c},
		&config.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: rec},
		&rollout.Reconciler{Client: c},
		&deploy.Reconciler{},
		&health.Reconciler{},
		&csr.Reconciler{Client: c, Recorder: rec},
		&signer.Reconciler{Client: c, Namespace: opts.Namespace, Recorder: rec},
		&token.Reconciler{},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", r, err)
		}
	}
	return nil
}
