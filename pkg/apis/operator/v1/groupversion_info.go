// Package v1 contains the operator.open-cluster-management.io/v1 API: the
// install records of each side. ClusterManager records how the hub
// components were installed and reports their state; Klusterlet does the same
// for the agent of one managed cluster.
//
// +kubebuilder:object:generate=true
// +groupName=operator.open-cluster-management.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "operator.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Klusterlet{},
		&KlusterletList{},
		&ClusterManager{},
		&ClusterManagerList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
