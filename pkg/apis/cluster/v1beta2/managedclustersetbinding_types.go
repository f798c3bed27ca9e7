package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedClusterSetBinding makes a ManagedClusterSet usable from its
// namespace: Placements and other workload APIs in that namespace may select
// clusters of the bound sets only. Its name must equal spec.clusterSet, and
// creating it needs permission to create the virtual subresource
// managedclustersets/bind for that set.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
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
	// binding's metadata.name and cannot change.
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
