package v1beta2

// Labels and annotations of cluster sets.
const (
	// ClusterSetLabel on a ManagedCluster names the set with selector type
	// ExclusiveClusterSetLabel that the cluster belongs to.
	ClusterSetLabel = "cluster.open-cluster-management.io/clusterset"
	// AutoUpdateAnnotation set to "false" on the default or global set stops
	// the hub from reverting changes to its spec.
	AutoUpdateAnnotation = "cluster.open-cluster-management.io/autoupdate"
)

// Names of the cluster sets the hub maintains.
const (
	// DefaultClusterSetName is the set of every cluster that has no other
	// exclusive set; the hub labels new clusters with it.
	DefaultClusterSetName = "default"
	// GlobalClusterSetName is the set that selects every cluster with an empty
	// label selector.
	GlobalClusterSetName = "global"
)

// Condition types and reasons of ManagedClusterSets and bindings.
const (
	// ManagedClusterSetConditionEmpty is True when the set selects no cluster.
	ManagedClusterSetConditionEmpty = "ClusterSetEmpty"
	// ReasonNoClusterMatched is the ClusterSetEmpty=True reason.
	ReasonNoClusterMatched = "NoClusterMatched"
	// ReasonClustersSelected is the ClusterSetEmpty=False reason.
	ReasonClustersSelected = "ClustersSelected"
	// ReasonInvalidClusterSelector is the ClusterSetEmpty=True reason when
	// spec.clusterSelector cannot be evaluated; the message names the error.
	ReasonInvalidClusterSelector = "InvalidClusterSelector"

	// ClusterSetBindingBoundType is True when the bound ManagedClusterSet exists.
	ClusterSetBindingBoundType = "Bound"
	// ReasonClusterSetBound is the Bound=True reason.
	ReasonClusterSetBound = "ClusterSetBound"
	// ReasonClusterSetNotFound is the Bound=False reason.
	ReasonClusterSetNotFound = "ClusterSetNotFound"
)
