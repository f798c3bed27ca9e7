package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnPlacementScore holds scores an add-on computed for one managed
// cluster. It lives in the cluster namespace on the hub, and Placements use
// its scores through prioritizers and CEL selectors.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type AddOnPlacementScore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status holds the scores.
	// +optional
	Status AddOnPlacementScoreStatus `json:"status,omitempty"`
}

// AddOnPlacementScoreStatus holds the scores of an AddOnPlacementScore.
type AddOnPlacementScoreStatus struct {
	// conditions report the state of the scores.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// scores are the named scores of the cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	Scores []AddOnPlacementScoreItem `json:"scores,omitempty"`

	// validUntil is when the scores expire; expired scores count as 0. Unset
	// means they never expire. The owner of the object keeps it up to date.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	ValidUntil *metav1.Time `json:"validUntil"`
}

// AddOnPlacementScoreItem is one named score.
type AddOnPlacementScoreItem struct {
	// name is the score's name.
	// +required
	Name string `json:"name"`

	// value is the score, from -100 to 100.
	// +required
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	Value int32 `json:"value"`
}

// AddOnPlacementScoreList is a list of AddOnPlacementScores.
//
// +kubebuilder:object:root=true
type AddOnPlacementScoreList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the AddOnPlacementScores.
	Items []AddOnPlacementScore `json:"items"`
}
