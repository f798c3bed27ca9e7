// Package v1beta1 contains the cluster.open-cluster-management.io/v1beta1 API:
// Placement, which selects clusters for workloads, and PlacementDecision, which
// records its result. It also serves ManagedClusterSet and
// ManagedClusterSetBinding at v1beta1 for manifests written against that
// version; their storage version is v1beta2 and the two schemas are kept
// identical apart from the legacy selector type, because the CRD uses no
// conversion webhook.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Placement{},
		&PlacementList{},
		&ManagedClusterSetBinding{},
		&ManagedClusterSetBindingList{},
		&ManagedClusterSet{},
		&ManagedClusterSetList{},
		&PlacementDecision{},
		&PlacementDecisionList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
