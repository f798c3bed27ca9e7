// Package v1alpha1 contains the work.open-cluster-management.io/v1alpha1 API:
// ManifestWorkReplicaSet, which stamps one ManifestWork per cluster selected
// by Placements and rolls changes out with a RolloutStrategy.
//
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
