// Package v1 contains the work.open-cluster-management.io/v1 API:
// ManifestWork, a set of Kubernetes manifests the hub asks the agent of one
// managed cluster to apply, and AppliedManifestWork, the agent's record on the
// managed cluster of what it applied for one ManifestWork.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
