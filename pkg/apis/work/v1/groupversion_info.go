// Package v1 contains the work.open-cluster-management.io/v1 API:
// ManifestWork, a set of Kubernetes manifests the hub asks the agent of one
// managed cluster to apply, and AppliedManifestWork, the agent's record on the
// managed cluster of what it applied for one ManifestWork.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ManifestWork{},
		&ManifestWorkList{},
		&AppliedManifestWork{},
		&AppliedManifestWorkList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
