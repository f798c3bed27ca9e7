package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedClusterSetBinding is the v1beta1 view of a ManagedClusterSetBinding,
// which makes a ManagedClusterSet usable from its namespace. It is stored as
// v1beta2; its name must equal spec.clusterSet.
//
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="cluster.open-cluster-management.io/v1beta1 ManagedClusterSetBinding is deprecated; use v1beta2"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName={mclsetbinding,mclsetbindings}
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.clusterSet",message="spec.clusterSet must equal metadata.name: the ManagedClusterSetBinding must have the same name as the target ManagedClusterSet",fieldPath=`.spec.clusterSet`
type ManagedClusterSetBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the bound ManagedClusterSet.
	// +required
	Spec ManagedClusterSetBindingSpec `json:"spec"`

	// status reports whether the bound set exists.
	// +optional
	Status ManagedClusterSetBindingStatus `json:"status,omitempty"`
}

// ManagedClusterSetBindingSpec is the desired state of a ManagedClusterSetBinding.
type ManagedClusterSetBindingSpec struct {
	// clusterSet is the name of the bound ManagedClusterSet. It must equal the
	// binding's metadata.name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterSet string `json:"clusterSet"`
}

// ManagedClusterSetBindingStatus is the observed state of a ManagedClusterSetBinding.
type ManagedClusterSetBindingStatus struct {
	// conditions report the binding's state; type Bound is True when the
	// ManagedClusterSet exists.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions"`
}

// ManagedClusterSetBindingList is a list of ManagedClusterSetBindings.
//
// +kubebuilder:object:root=true
type ManagedClusterSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManagedClusterSetBindings.
	Items []ManagedClusterSetBinding `json:"items"`
}
