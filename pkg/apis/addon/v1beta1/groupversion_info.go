// Package v1beta1 contains the addon.open-cluster-management.io/v1beta1 API,
// the version OCM's add-on managers and addon-framework read and write:
// ClusterManagementAddOn, ManagedClusterAddOn, AddOnDeploymentConfig and
// AddOnTemplate.
//
// It differs from v1alpha1 where OCM's v1beta1 does: a ManagedClusterAddOn has
// no spec.installNamespace (the value lives in the annotation
// addon.open-cluster-management.io/v1alpha1-install-namespace), a
// ClusterManagementAddOn lists spec.defaultConfigs instead of
// supportedConfigs and has no addOnConfiguration, and each status registration
// says its type (kubeClient or customSigner) and, for kubeClient, its driver.
//
// v1beta1 is the conversion hub of the group: every kind here implements
// sigs.k8s.io/controller-runtime/pkg/conversion.Hub, and the v1alpha1 kinds
// convert to and from it without losing a field, keeping what one version
// cannot hold in annotations.
//
// +kubebuilder:object:generate=true
// +groupName=addon.open-cluster-management.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "addon.open-cluster-management.io", Version: "v1beta1"}

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
