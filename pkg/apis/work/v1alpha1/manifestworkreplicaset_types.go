package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// ManifestWorkReplicaSet creates one ManifestWork from its template in the
// namespace of every cluster selected by its Placements, rolls template
// changes out with each placement's rollout strategy, removes the
// ManifestWorks of clusters that leave the decisions, and deletes them all
// when it is deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName={mwrs}
// +kubebuilder:printcolumn:name="Placement",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementVerified")].reason`,description="Reason"
// +kubebuilder:printcolumn:name="Found",type=string,JSONPath=`.status.conditions[?(@.type=="PlacementVerified")].status`,description="Configured"
// +kubebuilder:printcolumn:name="ManifestWorks",type=string,JSONPath=`.status.conditions[?(@.type=="ManifestworkApplied")].reason`,description="Reason"
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="ManifestworkApplied")].status`,description="Applied"
type ManifestWorkReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the ManifestWork template and the placements to distribute it to.
	// +optional
	Spec ManifestWorkReplicaSetSpec `json:"spec,omitempty"`

	// status summarizes the created ManifestWorks.
	// +optional
	Status ManifestWorkReplicaSetStatus `json:"status,omitempty"`
}

// ManifestWorkReplicaSetSpec is the desired state of a ManifestWorkReplicaSet.
type ManifestWorkReplicaSetSpec struct {
	// manifestWorkTemplate is the spec of every ManifestWork created. It is
	// validated like the spec of a ManifestWork.
	// +required
	ManifestWorkTemplate workv1.ManifestWorkSpec `json:"manifestWorkTemplate"`

	// placementRefs name the Placements, in this namespace, whose decisions
	// select the clusters. At least one.
	// +required
	// +kubebuilder:validation:MinItems=1
	PlacementRefs []LocalPlacementReference `json:"placementRefs"`

	// cascadeDeletionPolicy is Background (the default: the
	// ManifestWorkReplicaSet goes away without waiting for its ManifestWorks)
	// or Foreground (it waits until they are gone).
	// +optional
	// +kubebuilder:default=Background
	// +kubebuilder:validation:Enum=Background;Foreground
	CascadeDeletionPolicy CascadeDeletionPolicy `json:"cascadeDeletionPolicy,omitempty"`

	// overrides change the ManifestWork of some clusters: each entry chooses
	// clusters by name and/or ManagedCluster labels and patches manifests of
	// the template for them. Overrides apply in order, so a later entry
	// patches the result of an earlier one. This field is not part of OCM's
	// API.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Overrides []ManifestWorkOverride `json:"overrides,omitempty"`
}

// ManifestWorkOverride patches the manifests of the ManifestWorks of the
// clusters it chooses. A cluster is chosen when it is named in clusterNames
// or its ManagedCluster matches clusterSelector.
//
// +kubebuilder:validation:XValidation:rule="(has(self.clusterNames) && size(self.clusterNames) > 0) || has(self.clusterSelector)",message="an override must choose clusters with clusterNames or clusterSelector"
type ManifestWorkOverride struct {
	// clusterNames are the names of the clusters the override applies to.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	ClusterNames []string `json:"clusterNames,omitempty"`

	// clusterSelector chooses the clusters the override applies to by the
	// labels of their ManagedCluster. An empty selector chooses every cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// patches are applied, in order, to the manifests of the template for
	// the chosen clusters.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Patches []ManifestPatch `json:"patches"`
}

// ManifestPatch is a JSON merge patch (RFC 7386) of one manifest of the
// template.
type ManifestPatch struct {
	// resourceIdentifier names the manifest to patch. Every manifest of the
	// template it matches is patched; a patch matching none is an error.
	// +required
	ResourceIdentifier ManifestResourceIdentifier `json:"resourceIdentifier"`

	// mergePatch is a JSON merge patch (RFC 7386) applied to the manifest:
	// objects are merged, other values replaced, null removes a field. It
	// must be a JSON object and must not change the manifest's apiVersion,
	// kind, name or namespace.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	MergePatch runtime.RawExtension `json:"mergePatch"`
}

// ManifestResourceIdentifier names a manifest of a ManifestWork template
// like work/v1's ResourceIdentifier, with the kind as an alternative to the
// resource.
//
// +kubebuilder:validation:XValidation:rule="(has(self.resource) && size(self.resource) > 0) || (has(self.kind) && size(self.kind) > 0)",message="resource or kind is required"
type ManifestResourceIdentifier struct {
	// group is the API group of the manifest; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`

	// resource is the resource (plural, lowercase) of the manifest, such as
	// deployments, as guessed from its kind. Either resource or kind is required.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource,omitempty"`

	// kind is the kind of the manifest, such as Deployment. Either resource
	// or kind is required; when both are set both must match.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Kind string `json:"kind,omitempty"`

	// name is the name of the manifest.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace is the namespace of the manifest; empty for cluster-scoped
	// objects.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// CascadeDeletionPolicy says whether a ManifestWorkReplicaSet waits for its
// ManifestWorks to be gone before it goes away.
type CascadeDeletionPolicy string

const (
	// Foreground waits until the ManifestWorks are gone.
	Foreground CascadeDeletionPolicy = "Foreground"
	// Background does not wait.
	Background CascadeDeletionPolicy = "Background"
)

// LocalPlacementReference names a Placement in the ManifestWorkReplicaSet's
// namespace and how to roll out to its clusters.
type LocalPlacementReference struct {
	// name is the name of the Placement.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// rolloutStrategy says how template changes reach the placement's
	// clusters. Defaults to type All with no progress deadline.
	// +optional
	// +kubebuilder:default={type: All, all: {progressDeadline: None}}
	RolloutStrategy clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy"`
}

// ManifestWorkReplicaSetStatus is the observed state of a ManifestWorkReplicaSet.
type ManifestWorkReplicaSetStatus struct {
	// conditions report the state: PlacementVerified, PlacementRolledOut and
	// ManifestworkApplied.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// summary counts the ManifestWorks of all placements by state.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary"`

	// placementSummary summarizes each placement.
	// +optional
	PlacementsSummary []PlacementSummary `json:"placementSummary"`
}

// PlacementSummary summarizes the ManifestWorks of one placement.
type PlacementSummary struct {
	// name is the name of the Placement.
	// +required
	Name string `json:"name"`

	// availableDecisionGroups is how many decision groups have every
	// ManifestWork available, out of how many, for example 2/4.
	// +optional
	AvailableDecisionGroups string `json:"availableDecisionGroups"`

	// summary counts the placement's ManifestWorks by state.
	// +optional
	Summary ManifestWorkReplicaSetSummary `json:"summary"`
}

// ManifestWorkReplicaSetSummary counts ManifestWorks by state.
type ManifestWorkReplicaSetSummary struct {
	// total is the number of ManifestWorks.
	// +optional
	Total int `json:"total"`

	// desiredTotal is the number of clusters that should have a ManifestWork
	// under the rollout strategy.
	// +optional
	DesiredTotal int `json:"desiredTotal"`

	// progressing is the number of ManifestWorks with Progressing True.
	// +optional
	Progressing int `json:"progressing"`

	// available is the number of ManifestWorks with Available True.
	// +optional
	Available int `json:"available"`

	// degraded is the number of ManifestWorks with Degraded True.
	// +optional
	Degraded int `json:"degraded"`

	// applied is the number of ManifestWorks with Applied True.
	// +optional
	Applied int `json:"applied"`

	// updated is the number of ManifestWorks whose spec matches the current template.
	// +optional
	Updated int `json:"updated"`
}

// ManifestWorkReplicaSetList is a list of ManifestWorkReplicaSets.
//
// +kubebuilder:object:root=true
type ManifestWorkReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManifestWorkReplicaSets.
	Items []ManifestWorkReplicaSet `json:"items"`
}

// Condition types of a ManifestWorkReplicaSet.
const (
	// ManifestWorkReplicaSetConditionPlacementVerified reports whether the
	// placements and their decisions were found. Reasons: AsExpected,
	// PlacementDecisionNotFound, PlacementDecisionEmpty, NotAsExpected.
	ManifestWorkReplicaSetConditionPlacementVerified = "PlacementVerified"
	// ManifestWorkReplicaSetConditionPlacementRolledOut reports whether the
	// rollout finished. Reasons: Progressing, Complete.
	ManifestWorkReplicaSetConditionPlacementRolledOut = "PlacementRolledOut"
	// ManifestWorkReplicaSetConditionManifestworkApplied reports whether a
	// ManifestWork exists for every decided cluster. Reasons: AsExpected,
	// NotAsExpected, Processing, InvalidOverride,
	// ManifestWorkDenied.
	ManifestWorkReplicaSetConditionManifestworkApplied = "ManifestworkApplied"
)

// Reasons of the ManifestWorkReplicaSet conditions.
const (
	// ReasonAsExpected means the placements or ManifestWorks are as expected.
	ReasonAsExpected = "AsExpected"
	// ReasonNotAsExpected means they are not.
	ReasonNotAsExpected = "NotAsExpected"
	// ReasonPlacementDecisionNotFound means a placement has no PlacementDecision.
	ReasonPlacementDecisionNotFound = "PlacementDecisionNotFound"
	// ReasonPlacementDecisionEmpty means the placements selected no cluster.
	ReasonPlacementDecisionEmpty = "PlacementDecisionEmpty"
	// ReasonProcessing means the ManifestWorks are being created or updated.
	ReasonProcessing = "Processing"
	// ReasonProgressing means the rollout is in progress.
	ReasonProgressing = "Progressing"
	// ReasonComplete means the rollout finished.
	ReasonComplete = "Complete"
	// ReasonInvalidManifestWorkName is OCM's reason for a
	// ManifestWorkReplicaSet whose <namespace>.<name> is not a valid label
	// value. This controller never reports it: such a set's ManifestWorks
	// carry a hashed owner label instead (OwnerLabels). Kept for clients
	// matching on it.
	ReasonInvalidManifestWorkName = "InvalidManifestWorkName"
	// ReasonInvalidOverride means an override of the ManifestWorkReplicaSet
	// cannot be applied (a patch names no manifest of the template, is not a
	// JSON object, or changes a manifest's identity); no ManifestWork is
	// created, updated or deleted until it is fixed. Not an OCM reason.
	ReasonInvalidOverride = "InvalidOverride"
	// ReasonInvalidRolloutStrategy means a placement's rollout strategy
	// cannot be interpreted (for example a progressDeadline that is not a
	// duration). Not an OCM reason.
	ReasonInvalidRolloutStrategy = "InvalidRolloutStrategy"
	// ReasonManifestWorkDenied means the hub API server refused to create or
	// update a ManifestWork of the ManifestWorkReplicaSet (an admission policy
	// or RBAC denied it); the message names the clusters and the API server's
	// reason. The controller retries periodically. Not an OCM reason.
	ReasonManifestWorkDenied = "ManifestWorkDenied"
)

// Labels and finalizers.
const (
	// ManifestWorkReplicaSetControllerNameLabelKey on a ManifestWork names its
	// ManifestWorkReplicaSet as <namespace>.<name> when that fits a label
	// value (63 characters); see OwnerLabels.
	ManifestWorkReplicaSetControllerNameLabelKey = "work.open-cluster-management.io/manifestworkreplicaset"
	// ManifestWorkReplicaSetOwnerKeyHashLabelKey on a ManifestWork is
	// OwnerKeyHash of its ManifestWorkReplicaSet when <namespace>.<name> is
	// too long for the label above; see OwnerLabels.
	ManifestWorkReplicaSetOwnerKeyHashLabelKey = "work.open-cluster-management.io/ownerkey-hash"
	// ManifestWorkReplicaSetOwnerAnnotationKey on a ManifestWork labeled with
	// ManifestWorkReplicaSetOwnerKeyHashLabelKey names its
	// ManifestWorkReplicaSet as <namespace>/<name>; see OwnerAnnotations.
	ManifestWorkReplicaSetOwnerAnnotationKey = "work.open-cluster-management.io/manifestworkreplicaset-owner"
	// ManifestWorkReplicaSetPlacementNameLabelKey on a ManifestWork names the
	// Placement that selected its cluster.
	ManifestWorkReplicaSetPlacementNameLabelKey = "work.open-cluster-management.io/placementname"
	// ManifestWorkReplicaSetFinalizer lets the hub delete the ManifestWorks first.
	ManifestWorkReplicaSetFinalizer = "work.open-cluster-management.io/manifest-work-cleanup"
	// ManifestWorkSpecHashAnnotationKey on a ManifestWork of a
	// ManifestWorkReplicaSet is the hash of the spec the controller wrote
	// (template with the cluster's overrides); a different desired hash means
	// the cluster must be rolled out to again. Not an OCM annotation.
	ManifestWorkSpecHashAnnotationKey = "work.open-cluster-management.io/manifestworkreplicaset-spec-hash"
	// ManifestWorkSpecWrittenAnnotationKey on a ManifestWork of a
	// ManifestWorkReplicaSet is when (RFC 3339) the controller last wrote its
	// spec; progressDeadline and minSuccessTime count from it. Not an OCM
	// annotation.
	ManifestWorkSpecWrittenAnnotationKey = "work.open-cluster-management.io/manifestworkreplicaset-spec-written"
)
