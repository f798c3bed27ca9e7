package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedCluster is the hub's record of one registered cluster. It is
// cluster-scoped and its name is the cluster name.
//
// Registration is a double opt-in: the agent on the managed cluster creates the
// ManagedCluster (and a CSR for its client certificate) with its bootstrap
// credential, and a hub administrator accepts it by setting
// spec.hubAcceptsClient to true. Only then does the hub create the cluster
// namespace and grant the agent access to it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={mcl,mcls}
// +kubebuilder:printcolumn:name="Hub Accepted",type=boolean,JSONPath=`.spec.hubAcceptsClient`
// +kubebuilder:printcolumn:name="Managed Cluster URLs",type=string,JSONPath=`.spec.managedClusterClientConfigs[*].url`
// +kubebuilder:printcolumn:name="Joined",type=string,JSONPath=`.status.conditions[?(@.type=="ManagedClusterJoined")].status`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="ManagedClusterConditionAvailable")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1123 label: at most 63 lowercase alphanumeric characters or '-', starting and ending with an alphanumeric character"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'managed-clusters'",message="metadata.name managed-clusters is reserved: every agent is in group system:open-cluster-management:managed-clusters, so a cluster of that name would share its grants with all of them"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'open-cluster-management-agent-tokens'",message="metadata.name open-cluster-management-agent-tokens is reserved: it is the hub namespace of every cluster's token identity, which a cluster of that name would be granted as its own namespace"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'default' && !self.metadata.name.startsWith('kube-') && !self.metadata.name.startsWith('open-cluster-management')",message="metadata.name default, kube-* and open-cluster-management* are reserved: a cluster's namespace on the hub is named after it, and those are the hub's own namespaces"
// +kubebuilder:validation:XValidation:rule="!(self.metadata.name in ['registration', 'work'])",message="metadata.name registration and work are reserved: a cluster's ClusterRole would be named like the shared agent role open-cluster-management:managedcluster:<name>"
type ManagedCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration for the agent on the managed cluster.
	// +optional
	Spec ManagedClusterSpec `json:"spec"`

	// status is the most recently observed state of the managed cluster,
	// written by the hub controllers and the agent.
	// +optional
	Status ManagedClusterStatus `json:"status,omitempty"`
}

// ManagedClusterSpec is the desired state of a ManagedCluster.
type ManagedClusterSpec struct {
	// managedClusterClientConfigs lists the API server addresses of the managed
	// cluster that the hub may use to reach it. The agent fills it from its
	// external server URL settings. Empty means the hub has no address for it.
	// At most 32 entries: the bound keeps the URL validation rule within the
	// API server's cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	ManagedClusterClientConfigs []ClientConfig `json:"managedClusterClientConfigs,omitempty"`

	// hubAcceptsClient is the hub administrator's half of the double opt-in.
	// Setting it to true requires permission to update the virtual subresource
	// managedclusters/accept in the register.open-cluster-management.io group.
	// When true the hub creates the cluster namespace and grants the agent
	// access; setting it back to false revokes that access. Defaults to false.
	// +optional
	HubAcceptsClient bool `json:"hubAcceptsClient"`

	// leaseDurationSeconds is how often, in seconds, the agent renews its lease
	// on the hub. The hub marks the cluster's availability Unknown after five
	// missed renewals. Zero means the default of 60 seconds.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	LeaseDurationSeconds int32 `json:"leaseDurationSeconds,omitempty"`

	// taints repel placements that do not tolerate them. The taints
	// cluster.open-cluster-management.io/unavailable and
	// cluster.open-cluster-management.io/unreachable are managed by the hub;
	// other taints may be added or removed by anyone allowed to update the cluster.
	// +optional
	Taints []Taint `json:"taints,omitempty"`
}

// ClientConfig is one API server address of a managed cluster.
type ClientConfig struct {
	// url is the https URL of the managed cluster's API server, at most 2048
	// characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https'",message="url must be an https URL"
	URL string `json:"url"`

	// caBundle is the PEM-encoded CA bundle that verifies the API server's
	// serving certificate. The system trust store is used when it is empty.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// TaintEffect is the effect a Taint has on placements that do not tolerate it.
type TaintEffect string

const (
	// TaintEffectNoSelect keeps placements that do not tolerate the taint from
	// selecting the cluster, and removes the cluster from their existing decisions.
	TaintEffectNoSelect TaintEffect = "NoSelect"
	// TaintEffectPreferNoSelect makes the scheduler avoid the cluster without
	// forbidding it.
	TaintEffectPreferNoSelect TaintEffect = "PreferNoSelect"
	// TaintEffectNoSelectIfNew keeps placements that do not tolerate the taint
	// from newly selecting the cluster, while keeping existing decisions.
	TaintEffectNoSelectIfNew TaintEffect = "NoSelectIfNew"
)

// Taint marks a managed cluster so that placements that do not tolerate it
// are affected as its effect describes.
type Taint struct {
	// key is the taint key, for example bar or foo.example.com/bar: an optional
	// DNS subdomain prefix and a qualified name.
	// +required
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Key string `json:"key"`

	// value is the taint value matched by tolerations with operator Equal.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`

	// effect is what the taint does to placements that do not tolerate it:
	// NoSelect, PreferNoSelect or NoSelectIfNew.
	// +required
	// +kubebuilder:validation:Enum=NoSelect;PreferNoSelect;NoSelectIfNew
	Effect TaintEffect `json:"effect"`

	// timeAdded is when the taint was added. The hub stamps it; tolerations
	// with tolerationSeconds count from it.
	// +optional
	// +nullable
	TimeAdded metav1.Time `json:"timeAdded"`
}

// ResourceName names a resource in a ResourceList, such as cpu or memory.
type ResourceName string

const (
	// ResourceCPU is CPU, in cores (500m is half a core).
	ResourceCPU ResourceName = "cpu"
	// ResourceMemory is memory, in bytes.
	ResourceMemory ResourceName = "memory"
)

// ResourceList maps resource names to quantities, like core/v1 ResourceList.
type ResourceList map[ResourceName]resource.Quantity

// ManagedClusterStatus is the observed state of a ManagedCluster.
type ManagedClusterStatus struct {
	// conditions describe the cluster's registration and health: see the
	// ManagedClusterCondition* constants for the types.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions"`

	// capacity is the sum of the capacity of all nodes of the managed cluster.
	// +optional
	Capacity ResourceList `json:"capacity,omitempty"`

	// allocatable is the sum of the allocatable resources of the schedulable
	// nodes of the managed cluster.
	// +optional
	Allocatable ResourceList `json:"allocatable,omitempty"`

	// version is the Kubernetes version of the managed cluster.
	// +optional
	Version ManagedClusterVersion `json:"version,omitempty"`

	// clusterClaims are the ClusterClaims the agent collected on the managed
	// cluster (reserved claims first, then custom claims up to the configured
	// maximum), for example id.k8s.io and kubeversion.open-cluster-management.io.
	// +optional
	ClusterClaims []ManagedClusterClaim `json:"clusterClaims,omitempty"`

	// managedNamespaces are the namespaces the agent must create on the managed
	// cluster, copied from the spec.managedNamespaces of the ManagedClusterSets
	// the cluster belongs to.
	// +optional
	// +listType=map
	// +listMapKey=clusterSet
	// +listMapKey=name
	ManagedNamespaces []ClusterSetManagedNamespaceConfig `json:"managedNamespaces,omitempty"`
}

// ManagedClusterVersion is version information about a managed cluster.
type ManagedClusterVersion struct {
	// kubernetes is the Kubernetes version reported by the managed cluster's
	// API server, for example v1.36.2.
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// ManagedClusterClaim is a ClusterClaim collected from a managed cluster.
type ManagedClusterClaim struct {
	// name is the name of the ClusterClaim on the managed cluster.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// value is the claimed value.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// ManagedNamespaceConfig names a namespace that a ManagedClusterSet asks to be
// created on each of its member clusters.
type ManagedNamespaceConfig struct {
	// name is the name of the namespace, a DNS-1123 label.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ClusterSetManagedNamespaceConfig is a managed namespace together with the
// ManagedClusterSet that asked for it and its state on the managed cluster.
type ClusterSetManagedNamespaceConfig struct {
	ManagedNamespaceConfig `json:",inline"`

	// clusterSet is the name of the ManagedClusterSet that asked for the namespace.
	// +required
	ClusterSet string `json:"clusterSet"`

	// conditions report whether the agent created the namespace
	// (type NamespaceAvailable).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClusterList is a list of ManagedClusters.
//
// +kubebuilder:object:root=true
type ManagedClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ManagedClusters.
	Items []ManagedCluster `json:"items"`
}
