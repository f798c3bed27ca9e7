// Package v1alpha1 contains the work.open-cluster-management.io/v1alpha1 API:
// ManifestWorkReplicaSet, which stamps one ManifestWork per cluster selected
// by Placements and rolls changes out with a RolloutStrategy.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ManifestWorkReplicaSet{},
		&ManifestWorkReplicaSetList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
