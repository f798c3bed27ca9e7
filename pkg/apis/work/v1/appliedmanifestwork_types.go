package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppliedManifestWork is the agent's record, on the managed cluster, of what
// it applied for one ManifestWork on one hub. It is cluster-scoped and named
// <hub hash>-<ManifestWork name>. The applied objects are owned by it, so
// deleting it (for example after the agent was removed) deletes them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type AppliedManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec links the record to its hub and ManifestWork.
	// +optional
	Spec AppliedManifestWorkSpec `json:"spec,omitempty"`

	// status lists the applied objects.
	// +optional
	Status AppliedManifestWorkStatus `json:"status,omitempty"`
}

// AppliedManifestWorkSpec links an AppliedManifestWork to its hub and ManifestWork.
type AppliedManifestWorkSpec struct {
	// hubHash is the hex SHA-256 of the hub API server's host, identifying the hub.
	// +required
	HubHash string `json:"hubHash"`

	// agentID is the ID of the agent that applied the work.
	// +optional
	AgentID string `json:"agentID,omitempty"`

	// manifestWorkName is the name of the ManifestWork on the hub.
	// +required
	ManifestWorkName string `json:"manifestWorkName"`
}

// AppliedManifestWorkStatus lists the objects applied for a ManifestWork.
type AppliedManifestWorkStatus struct {
	// appliedResources are the applied objects. An entry is removed, and its
	// object deleted, when its manifest leaves the ManifestWork or the record
	// is finalized; the object may linger while its own finalizers run.
	// +optional
	AppliedResources []AppliedManifestResourceMeta `json:"appliedResources,omitempty"`

	// evictionStartTime is when the agent found the ManifestWork missing from
	// the hub. The record and its objects are deleted when the eviction grace
	// period has passed since then, unless the ManifestWork reappears.
	// +optional
	EvictionStartTime *metav1.Time `json:"evictionStartTime,omitempty"`
}

// AppliedManifestResourceMeta identifies an object applied for a ManifestWork.
type AppliedManifestResourceMeta struct {
	ResourceIdentifier `json:",inline"`

	// version is the API version the object was applied at.
	// +required
	Version string `json:"version"`

	// uid is the object's UID, used as a precondition when deleting it.
	// +optional
	UID string `json:"uid,omitempty"`
}

// AppliedManifestWorkList is a list of AppliedManifestWorks.
//
// +kubebuilder:object:root=true
type AppliedManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the AppliedManifestWorks.
	Items []AppliedManifestWork `json:"items"`
}
