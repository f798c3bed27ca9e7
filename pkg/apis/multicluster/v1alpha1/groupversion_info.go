// Package v1alpha1 contains the multicluster.x-k8s.io/v1alpha1 API of the
// Kubernetes SIG-Multicluster Cluster Inventory API
// (sigs.k8s.io/cluster-inventory-api apis/v1alpha1): ClusterProfile, one
// cluster of the fleet as its cluster manager exports it to the consumers of
// a namespace, and PlacementDecision (KEP-5313), the clusters a scheduler
// chose. The hub writes a ClusterProfile per ManagedCluster of every
// ManagedClusterSet bound to a namespace and, with the SIGPlacementDecision
// feature, a PlacementDecision per PlacementDecision of OCM's cluster API.
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "multicluster.x-k8s.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ClusterProfile{},
		&ClusterProfileList{},
		&PlacementDecision{},
		&PlacementDecisionList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
