package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ManifestWork is a set of Kubernetes manifests the hub asks the agent of one
// managed cluster to apply. It lives in the cluster namespace on the hub; the
// agent applies the manifests, reports their status back, and removes what it
// applied when the ManifestWork is deleted (as spec.deleteOption says).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type ManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the workload to apply and how.
	// +required
	Spec ManifestWorkSpec `json:"spec"`

	// status is the state of the workload on the managed cluster, reported by the agent.
	// +optional
	Status ManifestWorkStatus `json:"status,omitempty"`
}

// ManifestWorkSpec is the desired state of a ManifestWork. It is also the
// template of ManifestWorkReplicaSets and the agent spec of AddOnTemplates.
//
// The manifests may not be empty. The webhook-era limits that a CRD cannot
// express are left to the hub's admission policies: the total size of the
// manifests (DefaultManifestsSizeLimit) and the rule that no two manifests
// name the same object (ManifestKey; a pairwise comparison whose CEL cost is
// unbounded for an unbounded list).
//
// +kubebuilder:validation:XValidation:rule="has(self.workload) && has(self.workload.manifests) && size(self.workload.manifests) > 0",message="workload.manifests must not be empty",fieldPath=`.workload`
type ManifestWorkSpec struct {
	// workload holds the manifests to apply.
	// +optional
	Workload ManifestsTemplate `json:"workload,omitempty"`

	// deleteOption says what happens to the applied resources when the
	// ManifestWork is deleted or a manifest is removed from it. Unset means
	// Foreground: every applied resource is deleted.
	// +optional
	DeleteOption *DeleteOption `json:"deleteOption,omitempty"`

	// manifestConfigs configure individual manifests: update strategy,
	// status feedback and condition rules.
	// +optional
	ManifestConfigs []ManifestConfigOption `json:"manifestConfigs,omitempty"`

	// executor is the identity the agent applies the manifests as. Unset means
	// the agent's own identity, kept for backward compatibility.
	// +optional
	Executor *ManifestWorkExecutor `json:"executor,omitempty"`
}

// ManifestsTemplate holds the manifests of a ManifestWork.
type ManifestsTemplate struct {
	// manifests are the Kubernetes objects to apply on the managed cluster.
	// Each needs apiVersion, kind and metadata.name, and may not use
	// metadata.generateName. No two may name the same object (same API
	// group, kind, namespace and name), and together they may total at most
	// 500 KiB (512000 bytes) of JSON.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one Kubernetes object to apply on the managed cluster, kept as
// raw JSON.
//
// +kubebuilder:validation:XValidation:rule=`has(self.metadata) && has(self.metadata.name) && self.metadata.name != ""`,message="each manifest must set metadata.name"
// +kubebuilder:validation:XValidation:rule=`!has(self.metadata) || !has(self.metadata.generateName) || self.metadata.generateName == ""`,message="manifests must not set metadata.generateName: set metadata.name instead"
type Manifest struct {
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// DeletePropagationPolicyType says what happens to applied resources when
// their ManifestWork is deleted.
//
// +kubebuilder:validation:Enum=Foreground;Orphan;SelectivelyOrphan
type DeletePropagationPolicyType string

const (
	// DeletePropagationPolicyTypeForeground deletes every applied resource and
	// waits for them to be gone.
	DeletePropagationPolicyTypeForeground DeletePropagationPolicyType = "Foreground"
	// DeletePropagationPolicyTypeOrphan leaves every applied resource in place.
	DeletePropagationPolicyTypeOrphan DeletePropagationPolicyType = "Orphan"
	// DeletePropagationPolicyTypeSelectivelyOrphan leaves the resources listed
	// in selectivelyOrphans in place and deletes the others.
	DeletePropagationPolicyTypeSelectivelyOrphan DeletePropagationPolicyType = "SelectivelyOrphan"
)

// DeleteOption says what happens to applied resources when their ManifestWork
// is deleted.
type DeleteOption struct {
	// propagationPolicy is Foreground (the default), Orphan or
	// SelectivelyOrphan. SelectivelyOrphan lets a resource move from one
	// ManifestWork to another without being deleted: the new work adopts it,
	// then the old one orphans and drops it.
	// +optional
	// +kubebuilder:default=Foreground
	PropagationPolicy DeletePropagationPolicyType `json:"propagationPolicy"`

	// selectivelyOrphans lists the resources to orphan when propagationPolicy
	// is SelectivelyOrphan.
	// +optional
	SelectivelyOrphan *SelectivelyOrphan `json:"selectivelyOrphans,omitempty"`

	// ttlSecondsAfterFinished, when set, makes the hub delete the ManifestWork
	// this many seconds after its Complete condition became True (0: at once).
	// Unset keeps completed ManifestWorks. ManifestWorks created by a
	// ManifestWorkReplicaSet are never deleted this way: their replica set
	// owns them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int64 `json:"ttlSecondsAfterFinished,omitempty"`
}

// SelectivelyOrphan lists resources to leave in place when their ManifestWork
// is deleted.
type SelectivelyOrphan struct {
	// orphaningRules identify the resources of the ManifestWork to orphan.
	// +optional
	OrphaningRules []OrphaningRule `json:"orphaningRules,omitempty"`
}

// ResourceIdentifier identifies one resource of a ManifestWork.
type ResourceIdentifier struct {
	// group is the API group of the resource; empty for the core group.
	// +optional
	Group string `json:"group"`

	// resource is the resource (plural, lowercase) name, such as deployments.
	// +required
	Resource string `json:"resource"`

	// name is the name of the object.
	// +required
	Name string `json:"name"`

	// namespace is the namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace"`
}

// OrphaningRule identifies a resource to orphan when its ManifestWork is deleted.
type OrphaningRule ResourceIdentifier

// ManifestWorkExecutor is the identity the agent applies the manifests as.
type ManifestWorkExecutor struct {
	// subject is the identity.
	// +required
	Subject ManifestWorkExecutorSubject `json:"subject"`
}

// ManifestWorkExecutorSubjectType is the kind of an executor identity.
type ManifestWorkExecutorSubjectType string

const (
	// ExecutorSubjectTypeServiceAccount is a ServiceAccount on the managed cluster.
	ExecutorSubjectTypeServiceAccount ManifestWorkExecutorSubjectType = "ServiceAccount"
)

// ManifestWorkExecutorSubject is the identity the agent applies the manifests
// as. The agent checks that the identity may write every manifest before it
// applies them, and the hub requires the creator of the ManifestWork to be
// allowed the verb execute-as on manifestworks for that identity.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'ServiceAccount' || has(self.serviceAccount)",message="serviceAccount is required when type is ServiceAccount",fieldPath=`.serviceAccount`
type ManifestWorkExecutorSubject struct {
	// type is the kind of identity; only ServiceAccount is supported.
	// +required
	// +kubebuilder:validation:Enum=ServiceAccount
	Type ManifestWorkExecutorSubjectType `json:"type"`

	// serviceAccount names the ServiceAccount when type is ServiceAccount.
	// +optional
	ServiceAccount *ManifestWorkSubjectServiceAccount `json:"serviceAccount,omitempty"`
}

// ManifestWorkSubjectServiceAccount names a ServiceAccount on the managed cluster.
type ManifestWorkSubjectServiceAccount struct {
	// namespace is the ServiceAccount's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Namespace string `json:"namespace"`

	// name is the ServiceAccount's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	Name string `json:"name"`
}

// ManifestWorkList is a list of ManifestWorks.
//
// +kubebuilder:object:root=true
type ManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManifestWorks.
	Items []ManifestWork `json:"items"`
}
