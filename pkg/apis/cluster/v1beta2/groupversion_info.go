// Package v1beta2 contains the cluster.open-cluster-management.io/v1beta2 API:
// ManagedClusterSet, a named group of ManagedClusters, and
// ManagedClusterSetBinding, which makes a set usable from one namespace. This
// is the storage version of both kinds; they are also served as v1beta1.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta2"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
