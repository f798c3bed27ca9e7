// Package v1alpha1 contains the rollout.kubectl-ocm.io/v1alpha1 API of
// kubectl-ocm: what it adds to OCM's ManifestWorkReplicaSet rollouts without
// changing OCM's kinds. RolloutApproval opens a gate of a staged rollout; the
// annotations of policy.go configure the gates, pause or abort a rollout and
// choose what a rollout does when its failures pass maxFailures.
//
// +kubebuilder:object:generate=true
// +groupName=rollout.kubectl-ocm.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "rollout.kubectl-ocm.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&RolloutApproval{},
		&RolloutApprovalList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
