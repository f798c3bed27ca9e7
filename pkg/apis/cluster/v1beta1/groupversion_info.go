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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1beta1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
