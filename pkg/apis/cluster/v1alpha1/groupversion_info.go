// Package v1alpha1 contains the cluster.open-cluster-management.io/v1alpha1
// API: ClusterClaim, a fact a managed cluster states about itself (it lives on
// the managed cluster); AddOnPlacementScore, scores an add-on publishes for
// one cluster; and the RolloutStrategy types shared by the add-on and work APIs.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
