package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManifestWorkStatus is the observed state of a ManifestWork, reported by the agent.
type ManifestWorkStatus struct {
	// conditions summarize the workload: Applied, Available, Progressing,
	// Degraded, Complete and Deleting (see the Work* constants).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// resourceStatus reports each manifest.
	// +optional
	ResourceStatus ManifestResourceStatus `json:"resourceStatus,omitempty"`
}

// ManifestResourceStatus reports the manifests of a ManifestWork.
type ManifestResourceStatus struct {
	// manifests report each manifest: its identity, status feedback and
	// conditions (Applied, Available, StatusFeedbackSynced and the conditions
	// of its condition rules).
	// +optional
	Manifests []ManifestCondition `json:"manifests,omitempty"`
}

// ManifestCondition reports one manifest of a ManifestWork.
type ManifestCondition struct {
	// resourceMeta identifies the manifest and the object it applied.
	// +required
	ResourceMeta ManifestResourceMeta `json:"resourceMeta"`

	// statusFeedback holds the values selected by the manifest's feedback rules.
	// +optional
	StatusFeedbacks StatusFeedbackResult `json:"statusFeedback,omitempty"`

	// conditions report the manifest's state on the managed cluster.
	// +required
	Conditions []metav1.Condition `json:"conditions"`
}

// ManifestResourceMeta identifies a manifest of a ManifestWork and the object
// it applied.
type ManifestResourceMeta struct {
	// ordinal is the index of the manifest in spec.workload.manifests.
	// +required
	Ordinal int32 `json:"ordinal"`

	// group is the API group of the object.
	// +optional
	Group string `json:"group"`

	// version is the API version of the object.
	// +optional
	Version string `json:"version"`

	// kind is the kind of the object.
	// +optional
	Kind string `json:"kind"`

	// resource is the resource name of the object's kind.
	// +optional
	Resource string `json:"resource"`

	// name is the name of the object.
	// +optional
	Name string `json:"name"`

	// namespace is the namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace"`
}

// StatusFeedbackResult holds the status feedback values of a manifest.
type StatusFeedbackResult struct {
	// values are the reported values, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Values []FeedbackValue `json:"values,omitempty"`
}

// FeedbackValue is one reported status value.
type FeedbackValue struct {
	// name is the name of the value, from the feedback rule.
	// +required
	Name string `json:"name"`

	// fieldValue is the value.
	// +required
	Value FieldValue `json:"fieldValue"`
}

// ValueType is the type of a reported status value.
//
// +kubebuilder:validation:Enum=Integer;String;Boolean;JsonRaw
type ValueType string

const (
	// Integer is an integer value, in fieldValue.integer.
	Integer ValueType = "Integer"
	// String is a string value, in fieldValue.string.
	String ValueType = "String"
	// Boolean is a boolean value, in fieldValue.boolean.
	Boolean ValueType = "Boolean"
	// JsonRaw is a list or object encoded as JSON, in fieldValue.jsonRaw; the
	// agent reports it only with its RawFeedbackJsonString feature enabled.
	JsonRaw ValueType = "JsonRaw"
)

// FieldValue is a reported status value. Exactly the member named by type is set.
type FieldValue struct {
	// type is Integer, String, Boolean or JsonRaw.
	// +required
	Type ValueType `json:"type"`

	// integer is the value when type is Integer.
	// +optional
	Integer *int64 `json:"integer,omitempty"`

	// string is the value when type is String.
	// +optional
	String *string `json:"string,omitempty"`

	// boolean is the value when type is Boolean.
	// +optional
	Boolean *bool `json:"boolean,omitempty"`

	// jsonRaw is the JSON-encoded value when type is JsonRaw, at most 1024 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	JsonRaw *string `json:"jsonRaw,omitempty"`
}
