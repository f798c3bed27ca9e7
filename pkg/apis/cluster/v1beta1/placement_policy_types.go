package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// PrioritizerPolicy configures how a Placement scores candidate clusters.
type PrioritizerPolicy struct {
	// mode is Additive (the default) or Exact. In Additive mode the
	// prioritizers not listed in configurations keep their default weights
	// (Balance 1, Steady 1, every other 0); in Exact mode they weigh 0.
	// +optional
	// +kubebuilder:default=Additive
	// +kubebuilder:validation:Enum=Additive;Exact
	Mode PrioritizerPolicyModeType `json:"mode,omitempty"`

	// configurations set the weight of individual prioritizers.
	// +optional
	Configurations []PrioritizerConfig `json:"configurations,omitempty"`
}

// PrioritizerPolicyModeType is the mode of a PrioritizerPolicy.
type PrioritizerPolicyModeType string

const (
	// PrioritizerPolicyModeAdditive keeps the default weights of unlisted prioritizers.
	PrioritizerPolicyModeAdditive PrioritizerPolicyModeType = "Additive"
	// PrioritizerPolicyModeExact weighs unlisted prioritizers 0.
	PrioritizerPolicyModeExact PrioritizerPolicyModeType = "Exact"
)

// PrioritizerConfig sets the weight of one prioritizer.
type PrioritizerConfig struct {
	// scoreCoordinate names the prioritizer: a built-in one or an add-on score.
	// +required
	ScoreCoordinate *ScoreCoordinate `json:"scoreCoordinate,omitempty"`

	// weight multiplies the prioritizer's score (from -100 to 100) in a
	// cluster's total score. It ranges from -10 to 10 and defaults to 1; 0
	// disables the prioritizer and a negative weight prefers low scores.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=-10
	// +kubebuilder:validation:Maximum=10
	Weight int32 `json:"weight,omitempty"`
}

// ScoreCoordinate names a score source.
type ScoreCoordinate struct {
	// type is BuiltIn (the default), naming a prioritizer in builtIn, or AddOn,
	// naming an AddOnPlacementScore in addOn.
	// +required
	// +kubebuilder:default=BuiltIn
	// +kubebuilder:validation:Enum=BuiltIn;AddOn
	Type string `json:"type,omitempty"`

	// builtIn is the name of a built-in prioritizer: Balance, Steady,
	// ResourceAllocatableCPU or ResourceAllocatableMemory.
	// +optional
	BuiltIn string `json:"builtIn,omitempty"`

	// addOn names the AddOnPlacementScore and score when type is AddOn.
	// +optional
	AddOn *AddOnScore `json:"addOn,omitempty"`
}

// AddOnScore names a score of an AddOnPlacementScore.
type AddOnScore struct {
	// resourceName is the name of the AddOnPlacementScore in each cluster namespace.
	// +required
	ResourceName string `json:"resourceName"`

	// scoreName is the name of the score within the AddOnPlacementScore.
	// +required
	ScoreName string `json:"scoreName"`
}

// SpreadPolicy describes how a Placement's decisions are spread over
// topologies. The scheduler selects clusters greedily in score order and
// checks each constraint as a cluster is added.
type SpreadPolicy struct {
	// spreadConstraints are applied in order, first ones first. At most 8.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	SpreadConstraints []SpreadConstraintsTerm `json:"spreadConstraints,omitempty"`
}

// SpreadConstraintsTerm spreads decisions over the values of one topology key.
type SpreadConstraintsTerm struct {
	// topologyKey is a cluster label key or a cluster claim name.
	// +required
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	TopologyKey string `json:"topologyKey"`

	// topologyKeyType says whether topologyKey is a Label or a Claim.
	// +required
	// +kubebuilder:validation:Enum=Label;Claim
	TopologyKeyType TopologyKeyType `json:"topologyKeyType"`

	// maxSkew is the largest allowed difference between the number of
	// selected clusters in any topology domain and the smallest such number
	// over the domains of the feasible clusters. At least 1, the default.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MaxSkew int32 `json:"maxSkew"`

	// whenUnsatisfiable is what to do when maxSkew cannot be met:
	// ScheduleAnyway (the default: prefer clusters that keep the skew lowest,
	// never dropping a cluster for it) or DoNotSchedule (never exceed maxSkew;
	// clusters without the topology key are not selected).
	// +optional
	// +kubebuilder:default=ScheduleAnyway
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	WhenUnsatisfiable UnsatisfiableMaxSkewAction `json:"whenUnsatisfiable"`
}

// TopologyKeyType says what a spread constraint's topology key names.
type TopologyKeyType string

const (
	// TopologyKeyTypeLabel means the topology key is a cluster label key.
	TopologyKeyTypeLabel TopologyKeyType = "Label"
	// TopologyKeyTypeClaim means the topology key is a cluster claim name.
	TopologyKeyTypeClaim TopologyKeyType = "Claim"
)

// UnsatisfiableMaxSkewAction is what the scheduler does when maxSkew cannot be met.
type UnsatisfiableMaxSkewAction string

const (
	// DoNotSchedule selects no cluster that would exceed maxSkew, even if
	// fewer clusters than wanted are selected.
	DoNotSchedule UnsatisfiableMaxSkewAction = "DoNotSchedule"
	// ScheduleAnyway prefers clusters within maxSkew but keeps selecting.
	ScheduleAnyway UnsatisfiableMaxSkewAction = "ScheduleAnyway"
)

// Toleration lets a Placement select clusters whose taints it matches: the
// taint's key, value and effect, compared with the operator.
type Toleration struct {
	// key is the taint key to tolerate. Empty matches every key, and then the
	// operator must be Exists.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Key string `json:"key,omitempty"`

	// operator is Equal (the default: the taint value must equal value) or
	// Exists (any value).
	// +optional
	// +kubebuilder:default=Equal
	// +kubebuilder:validation:Enum=Equal;Exists
	Operator TolerationOperator `json:"operator,omitempty"`

	// value is the taint value to match when the operator is Equal.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`

	// effect is the taint effect to match: NoSelect, PreferNoSelect or
	// NoSelectIfNew. Empty matches every effect.
	// +optional
	// +kubebuilder:validation:Enum=NoSelect;PreferNoSelect;NoSelectIfNew
	Effect clusterv1.TaintEffect `json:"effect,omitempty"`

	// tolerationSeconds limits how long a NoSelect or PreferNoSelect taint is
	// tolerated, counted from the taint's timeAdded. Unset tolerates it forever.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// TolerationOperator compares a toleration with a taint.
type TolerationOperator string

const (
	// TolerationOpExists matches a taint with any value.
	TolerationOpExists TolerationOperator = "Exists"
	// TolerationOpEqual matches a taint with the toleration's value.
	TolerationOpEqual TolerationOperator = "Equal"
)

// DecisionStrategy divides the selected clusters of a Placement into groups.
type DecisionStrategy struct {
	// groupStrategy defines the decision groups.
	// +optional
	GroupStrategy GroupStrategy `json:"groupStrategy,omitempty"`
}

// GroupStrategy defines the decision groups of a Placement.
type GroupStrategy struct {
	// decisionGroups are named groups, built first from the selected clusters
	// they match. The remaining clusters form unnamed groups. A group larger
	// than clustersPerDecisionGroup is split into several with the same name.
	// +optional
	DecisionGroups []DecisionGroup `json:"decisionGroups,omitempty"`

	// clustersPerDecisionGroup is the largest size of a decision group, as a
	// number or a percentage of the selected clusters. Defaults to 100%.
	// +optional
	// +kubebuilder:default="100%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$`
	ClustersPerDecisionGroup intstr.IntOrString `json:"clustersPerDecisionGroup,omitempty"`
}

// DecisionGroup is a named group of the selected clusters.
type DecisionGroup struct {
	// groupName is the group's name, set as the value of the label
	// cluster.open-cluster-management.io/decision-group-name on its
	// PlacementDecisions.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$`
	GroupName string `json:"groupName,omitempty"`

	// groupClusterSelector selects the selected clusters that belong to the group.
	// +required
	ClusterSelector GroupClusterSelector `json:"groupClusterSelector,omitempty"`
}

// GroupClusterSelector selects the clusters of a decision group; its
// selectors are ANDed and an empty selector matches every cluster.
type GroupClusterSelector struct {
	// labelSelector selects clusters by their labels.
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`

	// claimSelector selects clusters by the claims in their status.clusterClaims.
	// +optional
	ClaimSelector ClusterClaimSelector `json:"claimSelector,omitempty"`
}
