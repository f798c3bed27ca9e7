package placement

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupWithManager registers the placement scheduler with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	_ = mgr
	return nil
}
