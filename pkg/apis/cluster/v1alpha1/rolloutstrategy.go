package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutType is how a workload is rolled out to the clusters a Placement selects.
type RolloutType string

const (
	// All applies the workload to every selected cluster at once.
	All RolloutType = "All"
	// Progressive applies the workload to a bounded number of clusters at a
	// time, moving on as clusters succeed.
	Progressive RolloutType = "Progressive"
	// ProgressivePerGroup applies the workload one decision group at a time,
	// moving on when every cluster of the group succeeded.
	ProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// ProgressDeadlineNone is the progressDeadline value meaning "wait forever".
const ProgressDeadlineNone = "None"

// RolloutStrategy says how a workload is applied to the clusters selected by
// a Placement and its decision strategy. It is used by the add-on and work APIs.
type RolloutStrategy struct {
	// type is All (the default), Progressive or ProgressivePerGroup.
	// All applies to every selected cluster at once. Progressive applies to at
	// most maxConcurrency clusters at a time and starts another cluster when one
	// succeeds, unless maxFailures is exceeded. ProgressivePerGroup applies one
	// decision group at a time and moves to the next group when every cluster
	// of the current one succeeded, unless maxFailures is exceeded.
	// +optional
	// +kubebuilder:default=All
	// +kubebuilder:validation:Enum=All;Progressive;ProgressivePerGroup
	Type RolloutType `json:"type,omitempty"`

	// all configures the rollout of type All.
	// +optional
	All *RolloutAll `json:"all,omitempty"`

	// progressive configures the rollout of type Progressive.
	// +optional
	Progressive *RolloutProgressive `json:"progressive,omitempty"`

	// progressivePerGroup configures the rollout of type ProgressivePerGroup.
	// +optional
	ProgressivePerGroup *RolloutProgressivePerGroup `json:"progressivePerGroup,omitempty"`
}

// RolloutConfig holds the timing and failure settings common to every rollout type.
type RolloutConfig struct {
	// minSuccessTime is a soak time: after a cluster succeeded, the rollout
	// waits this long before treating it as done and moving on. It applies to
	// Progressive and ProgressivePerGroup. A Go duration such as 90s, 5m or 2h;
	// the default "0" moves on at once.
	// +optional
	// +kubebuilder:default="0"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	MinSuccessTime metav1.Duration `json:"minSuccessTime,omitzero"`

	// progressDeadline is how long to wait for a cluster to succeed before
	// counting it as failed (timed out), as a number followed by h, m or s
	// (for example 10m), or None (the default) to wait forever.
	// +optional
	// +kubebuilder:default=None
	// +kubebuilder:validation:Pattern=`^(([0-9])+[h|m|s])|None$`
	ProgressDeadline string `json:"progressDeadline,omitempty"`

	// maxFailures is how many clusters of the current rollout, as a number or a
	// percentage, may fail or time out before the rollout stops. It applies to
	// Progressive (counted over all clusters) and ProgressivePerGroup (counted
	// over the current group), but never to mandatory decision groups, which
	// tolerate no failure. Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	MaxFailures intstr.IntOrString `json:"maxFailures,omitzero"`
}

// MandatoryDecisionGroup names a decision group by name or index. The name is
// matched first.
type MandatoryDecisionGroup struct {
	// groupName is the value of the cluster.open-cluster-management.io/decision-group-name
	// label of the group's PlacementDecisions.
	// +optional
	GroupName string `json:"groupName,omitempty"`

	// groupIndex is the value of the cluster.open-cluster-management.io/decision-group-index
	// label of the group's PlacementDecisions.
	// +optional
	GroupIndex int32 `json:"groupIndex,omitempty"`
}

// MandatoryDecisionGroups lists the decision groups rolled out first.
type MandatoryDecisionGroups struct {
	// mandatoryDecisionGroups are rolled out first, in order, and the rollout
	// stops if any of their clusters fails. They must match decision groups of
	// the Placement's decision strategy.
	// +optional
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`
}

// RolloutAll configures a rollout of type All.
type RolloutAll struct {
	RolloutConfig `json:",inline"`
}

// RolloutProgressivePerGroup configures a rollout of type ProgressivePerGroup.
type RolloutProgressivePerGroup struct {
	RolloutConfig `json:",inline"`

	MandatoryDecisionGroups `json:",inline"`
}

// RolloutProgressive configures a rollout of type Progressive.
type RolloutProgressive struct {
	RolloutConfig `json:",inline"`

	MandatoryDecisionGroups `json:",inline"`

	// maxConcurrency is the largest number of clusters, as a number or a
	// percentage of the selected clusters, being rolled out at the same time.
	// Unset means the Placement's clustersPerDecisionGroup.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	MaxConcurrency intstr.IntOrString `json:"maxConcurrency,omitzero"`
}
