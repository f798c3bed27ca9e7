package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GateType says when a gate of a stage holds a rollout.
type GateType string

const (
	// GateBefore holds a stage's clusters until it is approved.
	GateBefore GateType = "Before"
	// GateAfter holds the next stage (and, after the last stage, the
	// rollout's completion) until the finished stage is approved.
	GateAfter GateType = "After"
)

// RolloutApproval opens one gate of one stage of the rollout of one revision
// of a ManifestWorkReplicaSet in its namespace. Whoever may create
// RolloutApprovals in that namespace may approve; the approver is recorded
// in spec.approver, which admission requires to be the creating user. An
// approval is never changed: delete it and create another. The hub
// controller deletes the approvals of revisions the set no longer keeps.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Set",type=string,JSONPath=`.spec.manifestWorkReplicaSet`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.spec.revision`
// +kubebuilder:printcolumn:name="Placement",type=string,JSONPath=`.spec.placement`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.spec.stage`
// +kubebuilder:printcolumn:name="Gate",type=string,JSONPath=`.spec.gate`
// +kubebuilder:printcolumn:name="Approver",type=string,JSONPath=`.spec.approver`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RolloutApproval struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the gate the approval opens.
	// +required
	Spec RolloutApprovalSpec `json:"spec"`
}

// RolloutApprovalSpec names one gate of one stage of one revision's rollout.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a RolloutApproval is never changed: delete it and create another"
type RolloutApprovalSpec struct {
	// ManifestWorkReplicaSet is the name of the set, in the approval's
	// namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ManifestWorkReplicaSet string `json:"manifestWorkReplicaSet"`

	// Revision is the number of the set's revision whose rollout this
	// approves (the set's annotation work.kubectl-ocm.io/revision): a new
	// template, or an undo, starts a rollout with gates closed again.
	// +required
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`

	// Placement is the placementRef of the set whose rollout has the stage.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Placement string `json:"placement"`

	// Stage is the stage's name: its decision group's name, group-<index>
	// for a group without a name, or batch-<n> for a rollout cut into
	// stages of a number of clusters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Stage string `json:"stage"`

	// Gate is the gate of the stage this opens: Before lets the stage
	// start, After lets the rollout go past the finished stage.
	// +required
	// +kubebuilder:validation:Enum=Before;After
	Gate GateType `json:"gate"`

	// Approver is the user who approved: admission requires the user
	// creating the approval.
	// +required
	// +kubebuilder:validation:MinLength=1
	Approver string `json:"approver"`

	// Message says why, for the record.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// RolloutApprovalList is a list of RolloutApprovals.
//
// +kubebuilder:object:root=true
type RolloutApprovalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the approvals.
	Items []RolloutApproval `json:"items"`
}
