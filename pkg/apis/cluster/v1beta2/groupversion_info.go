// Package v1beta2 contains the cluster.open-cluster-management.io/v1beta2 API:
// ManagedClusterSet, a named group of ManagedClusters, and
// ManagedClusterSetBinding, which makes a set usable from one namespace. This
// is the storage version of both kinds; they are also served as v1beta1.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta2"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ManagedClusterSetBinding{},
		&ManagedClusterSetBindingList{},
		&ManagedClusterSet{},
		&ManagedClusterSetList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
