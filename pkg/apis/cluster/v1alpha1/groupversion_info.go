// Package v1alpha1 contains the cluster.open-cluster-management.io/v1alpha1
// API: ClusterClaim, a fact a managed cluster states about itself (it lives on
// the managed cluster); AddOnPlacementScore, scores an add-on publishes for
// one cluster; and the RolloutStrategy types shared by the add-on and work APIs.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&AddOnPlacementScore{},
		&AddOnPlacementScoreList{},
		&ClusterClaim{},
		&ClusterClaimList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
