// Package v1 contains the operator.open-cluster-management.io/v1 API: the
// install records of each side. ClusterManager records how the hub
// components were installed and reports their state; Klusterlet does the same
// for the agent of one managed cluster.
//
// +kubebuilder:object:generate=true
// +groupName=operator.open-cluster-management.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "operator.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
