package v1beta1

// Condition types of a Placement.
const (
	// PlacementConditionSatisfied is True when the placement selected as many
	// clusters as it asked for.
	PlacementConditionSatisfied = "PlacementSatisfied"
	// PlacementConditionMisconfigured is True when the placement's
	// configuration is invalid, for example a CEL expression does not compile.
	PlacementConditionMisconfigured = "PlacementMisconfigured"
)

// Reasons of the Placement conditions.
const (
	// ReasonNoManagedClusterSetBindings is a PlacementSatisfied=False reason: no
	// ManagedClusterSet is bound to the placement's namespace.
	ReasonNoManagedClusterSetBindings = "NoManagedClusterSetBindings"
	// ReasonNoIntersection is a PlacementSatisfied=False reason: none of
	// spec.clusterSets is bound to the placement's namespace.
	ReasonNoIntersection = "NoIntersection"
	// ReasonAllManagedClusterSetsEmpty is a PlacementSatisfied=False reason:
	// the candidate cluster sets have no members.
	ReasonAllManagedClusterSetsEmpty = "AllManagedClusterSetsEmpty"
	// ReasonNoManagedClusterMatched is a PlacementSatisfied=False reason: no
	// candidate cluster matched the predicates and tolerations.
	ReasonNoManagedClusterMatched = "NoManagedClusterMatched"
	// ReasonNotAllDecisionsScheduled is a PlacementSatisfied=False reason: fewer
	// clusters matched than spec.numberOfClusters.
	ReasonNotAllDecisionsScheduled = "NotAllDecisionsScheduled"
	// ReasonAllDecisionsScheduled is the PlacementSatisfied=True reason.
	ReasonAllDecisionsScheduled = "AllDecisionsScheduled"
	// ReasonMisconfigured is the PlacementMisconfigured=True reason.
	ReasonMisconfigured = "Misconfigured"
	// ReasonSucceedconfigured is the PlacementMisconfigured=False reason
	// (spelled as in OCM).
	ReasonSucceedconfigured = "Succeedconfigured"
)

// Labels and annotations of Placements and PlacementDecisions.
const (
	// PlacementLabel on a PlacementDecision names its Placement.
	PlacementLabel = "cluster.open-cluster-management.io/placement"
	// DecisionGroupIndexLabel on a PlacementDecision is the index of its decision group.
	DecisionGroupIndexLabel = "cluster.open-cluster-management.io/decision-group-index"
	// DecisionGroupNameLabel on a PlacementDecision is the name of its decision
	// group, empty for unnamed groups.
	DecisionGroupNameLabel = "cluster.open-cluster-management.io/decision-group-name"
	// PlacementDisableAnnotation set to "true" on a Placement makes the
	// scheduler skip it, leaving its decisions to another controller.
	PlacementDisableAnnotation = "cluster.open-cluster-management.io/experimental-scheduling-disable"
)

// Score coordinate types and built-in prioritizer names.
const (
	// ScoreCoordinateTypeBuiltIn names a built-in prioritizer in builtIn.
	ScoreCoordinateTypeBuiltIn = "BuiltIn"
	// ScoreCoordinateTypeAddOn names an AddOnPlacementScore in addOn.
	ScoreCoordinateTypeAddOn = "AddOn"

	// PrioritizerBalance prefers clusters with fewer decisions of other placements.
	PrioritizerBalance = "Balance"
	// PrioritizerSteady prefers the clusters already selected.
	PrioritizerSteady = "Steady"
	// PrioritizerResourceAllocatableCPU prefers clusters with more allocatable CPU.
	PrioritizerResourceAllocatableCPU = "ResourceAllocatableCPU"
	// PrioritizerResourceAllocatableMemory prefers clusters with more allocatable memory.
	PrioritizerResourceAllocatableMemory = "ResourceAllocatableMemory"
	// PrioritizerSpread is listed by OCM's documentation but not implemented.
	PrioritizerSpread = "Spread"
)

// Limits and defaults of the scheduler.
const (
	// MaxDecisionsPerPlacementDecision is the largest number of decisions one
	// PlacementDecision holds.
	MaxDecisionsPerPlacementDecision = 100
	// DefaultPrioritizerWeight is the weight of a configured prioritizer
	// without an explicit weight, and of Balance and Steady in Additive mode.
	DefaultPrioritizerWeight = 1
)
