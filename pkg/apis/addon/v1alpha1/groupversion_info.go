// Package v1alpha1 contains the addon.open-cluster-management.io/v1alpha1 API:
// ClusterManagementAddOn registers an add-on with the hub, ManagedClusterAddOn
// enables it on one managed cluster, AddOnDeploymentConfig configures its
// deployment, and AddOnTemplate describes a template-based add-on.
//
// Only v1alpha1 is served for now. It is the version clusteradm writes; its
// field names and JSON spellings (including status.defaultconfigReferences)
// are OCM's.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
