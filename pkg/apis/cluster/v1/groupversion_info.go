// Package v1 contains the cluster.open-cluster-management.io/v1 API: the
// ManagedCluster kind, the hub's record of one registered Kubernetes cluster.
//
// Field names, condition types, reasons, labels, annotations and finalizers
// are wire-compatible with Open Cluster Management so that existing manifests,
// scripts and tools keep working against a kubectl-ocm hub.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ManagedCluster{},
		&ManagedClusterList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
