// Package v1alpha1 contains the addon.open-cluster-management.io/v1alpha1 API:
// ClusterManagementAddOn registers an add-on with the hub, ManagedClusterAddOn
// enables it on one managed cluster, AddOnDeploymentConfig configures its
// deployment, and AddOnTemplate describes a template-based add-on.
//
// v1alpha1 is the version clusteradm writes; v1beta1 is stored. Its
// field names and JSON spellings (including status.defaultconfigReferences)
// are OCM's. Every kind converts to and from v1beta1, the conversion hub,
// without losing a field (see ConvertTo and ConvertFrom).
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and the list and watch
// types of the group version, with scheme.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&ClusterManagementAddOn{},
		&ClusterManagementAddOnList{},
		&AddOnTemplate{},
		&AddOnTemplateList{},
		&ManagedClusterAddOn{},
		&ManagedClusterAddOnList{},
		&AddOnDeploymentConfig{},
		&AddOnDeploymentConfigList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
