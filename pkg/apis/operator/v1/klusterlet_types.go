package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Klusterlet is the install record of the agent of one managed cluster: the
// cluster name it registers as, where and how the agent runs, and its state.
// It is cluster-scoped; a managed cluster has one, named klusterlet. The agent
// needs the Secret bootstrap-hub-kubeconfig in its namespace to register.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type Klusterlet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the configuration of the agent.
	// +optional
	Spec KlusterletSpec `json:"spec,omitempty"`

	// status reports the state of the agent.
	// +optional
	Status KlusterletStatus `json:"status,omitempty"`
}

// KlusterletSpec is the configuration of the agent of a managed cluster.
// An agent that reports its hosting cluster (deployOption.reportHostingCluster:
// Enable) needs the name it reports and the ClusterClaim feature, as in OCM.
//
// +kubebuilder:validation:XValidation:rule="!has(self.deployOption) || !has(self.deployOption.reportHostingCluster) || self.deployOption.reportHostingCluster != 'Enable' || (has(self.deployOption.mode) && self.deployOption.mode in ['Hosted', 'SingletonHosted']) || (has(self.clusterName) && size(self.clusterName) > 0)",message="spec.clusterName is required when spec.deployOption.reportHostingCluster is Enable outside the Hosted modes: the agent reports the cluster's own name as its hosting cluster; set it, or remove reportHostingCluster"
// +kubebuilder:validation:XValidation:rule="!has(self.deployOption) || !has(self.deployOption.reportHostingCluster) || self.deployOption.reportHostingCluster != 'Enable' || !has(self.registrationConfiguration) || !has(self.registrationConfiguration.featureGates) || !self.registrationConfiguration.featureGates.exists(g, g.feature == 'ClusterClaim' && (!has(g.mode) || g.mode == 'Disable'))",message="feature gate ClusterClaim cannot be disabled in spec.registrationConfiguration.featureGates when spec.deployOption.reportHostingCluster is Enable: the agent reports its hosting cluster as a ClusterClaim; enable ClusterClaim, or remove reportHostingCluster"
type KlusterletSpec struct {
	// namespace is where the agent runs on the managed cluster. It must start
	// with open-cluster-management-; open-cluster-management-agent when unset.
	// Add-ons go to <namespace>-addon.
	// +optional
	// +kubebuilder:validation:MaxLength=57
	// +kubebuilder:validation:Pattern=`^open-cluster-management-[-a-z0-9]*[a-z0-9]$`
	Namespace string `json:"namespace,omitempty"`

	// registrationImagePullSpec is the image of the registration agent.
	// +optional
	RegistrationImagePullSpec string `json:"registrationImagePullSpec,omitempty"`

	// workImagePullSpec is the image of the work agent.
	// +optional
	WorkImagePullSpec string `json:"workImagePullSpec,omitempty"`

	// imagePullSpec is the image of the agent when it runs as a single
	// deployment (Singleton modes).
	// +optional
	ImagePullSpec string `json:"imagePullSpec,omitempty"`

	// clusterName is the name the cluster registers as on the hub, a DNS-1123
	// label of at most 63 characters and none of the names the hub reserves,
	// which it refuses for a ManagedCluster too. The agent generates one when
	// it is unset.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self != 'managed-clusters'",message="clusterName managed-clusters is reserved: every agent is in group system:open-cluster-management:managed-clusters, so a cluster of that name would share its grants with all of them"
	// +kubebuilder:validation:XValidation:rule="self != 'open-cluster-management-agent-tokens'",message="clusterName open-cluster-management-agent-tokens is reserved: it is the hub namespace of every cluster's token identity, which a cluster of that name would be granted as its own namespace"
	// +kubebuilder:validation:XValidation:rule="self != 'default' && !self.startsWith('kube-') && !self.startsWith('open-cluster-management')",message="clusterName default, kube-* and open-cluster-management* are reserved: a cluster's namespace on the hub is named after it, and those are the hub's own namespaces"
	// +kubebuilder:validation:XValidation:rule="!(self in ['registration', 'work'])",message="clusterName registration and work are reserved: a cluster's ClusterRole would be named like the shared agent role open-cluster-management:managedcluster:<name>"
	ClusterName string `json:"clusterName,omitempty"`

	// externalServerURLs are the managed cluster's API server URLs the hub may
	// use; they become the ManagedCluster's managedClusterClientConfigs.
	// +optional
	ExternalServerURLs []ServerURL `json:"externalServerURLs,omitempty"`

	// nodePlacement sets where the agent's pods are scheduled.
	// +optional
	NodePlacement NodePlacement `json:"nodePlacement,omitempty"`

	// deployOption says how the agent is deployed.
	// +optional
	DeployOption KlusterletDeployOption `json:"deployOption,omitempty"`

	// registrationConfiguration configures the registration agent.
	// +optional
	RegistrationConfiguration *RegistrationConfiguration `json:"registrationConfiguration,omitempty"`

	// workConfiguration configures the work agent.
	// +optional
	WorkConfiguration *WorkAgentConfiguration `json:"workConfiguration,omitempty"`

	// hubApiServerHostAlias adds a hosts entry for the hub API server to the agent's pods.
	// +optional
	HubApiServerHostAlias *HubApiServerHostAlias `json:"hubApiServerHostAlias,omitempty"`

	// resourceRequirement sets the resources of every agent container.
	// +optional
	ResourceRequirement *ResourceRequirement `json:"resourceRequirement,omitempty"`

	// priorityClassName is the PriorityClass of the agent's pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// tlsProfile is the TLS profile of the agent's TLS endpoints. Each key
	// it sets wins over the same key of ConfigMap ocm-tls-profile in the
	// Klusterlet operator's namespace. OCM has no such field; it reads the
	// ConfigMap only.
	// +optional
	TLSProfile *TLSProfile `json:"tlsProfile,omitempty"`

	// networkPolicyConfiguration, when set, makes the operator apply
	// NetworkPolicies to the agent's namespace: its Pods get no traffic but
	// the agent's egress to its hubs' API servers (and the proxy it reaches
	// them through), to the managed cluster's API server and to DNS, and,
	// from monitoringNamespace, ingress to the agent's metrics port. Unset,
	// the operator applies none and removes those it applied.
	// +optional
	NetworkPolicyConfiguration *KlusterletNetworkPolicyConfiguration `json:"networkPolicyConfiguration,omitempty"`

	// leaderElection sets the leader election timings of the agent; unset
	// fields keep its defaults. OCM has no such field.
	// +optional
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

// ServerURL is an API server URL of the managed cluster and its CA bundle.
type ServerURL struct {
	// url is the https URL of the API server.
	// +required
	URL string `json:"url"`

	// caBundle is the PEM-encoded CA bundle of the API server; the system
	// trust store when empty.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// HubApiServerHostAlias maps the hub API server's host name to an IP address
// in the agent's hosts file.
type HubApiServerHostAlias struct {
	// ip is the IPv4 address.
	// +required
	// +kubebuilder:validation:Pattern=`^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$`
	IP string `json:"ip"`

	// hostname is the host name.
	// +required
	// +kubebuilder:validation:Pattern=`^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$`
	Hostname string `json:"hostname"`
}

// KlusterletDeployOption says how the agent is deployed.
//
// +kubebuilder:validation:XValidation:rule="!has(self.reportHostingCluster) || self.reportHostingCluster != 'Enable' || !has(self.mode) || !(self.mode in ['Hosted', 'SingletonHosted']) || (has(self.hosted) && has(self.hosted.managementClusterName) && size(self.hosted.managementClusterName) > 0)",message="spec.deployOption.hosted.managementClusterName is required when spec.deployOption.reportHostingCluster is Enable in the Hosted modes: it is the hosting cluster the agent reports, the hub's name for the cluster it runs on; set it, or remove reportHostingCluster"
type KlusterletDeployOption struct {
	// mode is Default (the default: separate registration and work agents on
	// the managed cluster), Hosted (they run on a management cluster),
	// Singleton (one agent deployment) or SingletonHosted. It must not change
	// once set.
	// +optional
	// +kubebuilder:validation:Enum="";Default;Hosted;Singleton;SingletonHosted
	Mode InstallMode `json:"mode"`

	// reportHostingCluster set to Enable makes the agent report where it runs
	// through the reserved ClusterClaim hosting-cluster.open-cluster-management.io
	// in its ManagedCluster's status: the cluster's own name (spec.clusterName,
	// then required), or hosted.managementClusterName in the Hosted modes
	// (then required). Add-ons whose ClusterManagementAddOn enables
	// hostedModeAutoDiscovery are hosted there. The ClusterClaim feature
	// gate must not be disabled with it.
	// +optional
	// +kubebuilder:validation:Enum=Enable;Disable
	ReportHostingCluster ReportHostingClusterMode `json:"reportHostingCluster,omitempty"`

	// hosted configures the modes that run on a management cluster.
	// +optional
	Hosted *KlusterletHostedConfiguration `json:"hosted,omitempty"`
}

// ReportHostingClusterMode says whether the agent reports where it runs.
type ReportHostingClusterMode string

const (
	// ReportHostingClusterModeEnable reports it.
	ReportHostingClusterModeEnable ReportHostingClusterMode = "Enable"
	// ReportHostingClusterModeDisable does not (the default).
	ReportHostingClusterModeDisable ReportHostingClusterMode = "Disable"
)

// KlusterletHostedConfiguration configures the modes that run on a management cluster.
type KlusterletHostedConfiguration struct {
	// managementClusterName is the hub's name for the management cluster, the
	// hosting cluster the agent reports with reportHostingCluster.
	// +optional
	ManagementClusterName string `json:"managementClusterName,omitempty"`
}

// KlusterletStatus is the observed state of the agent.
type KlusterletStatus struct {
	// observedGeneration is the generation of the spec last acted upon.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions report the state: Applied, ReadyToApply, Available,
	// HubConnectionDegraded, RegistrationDesiredDegraded, WorkDesiredDegraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions"`

	// generations record the generations of the objects last applied.
	// +optional
	Generations []GenerationStatus `json:"generations,omitempty"`

	// relatedResources are the objects the installer manages.
	// +optional
	RelatedResources []RelatedResourceMeta `json:"relatedResources,omitempty"`
}

// KlusterletList is a list of Klusterlets.
//
// +kubebuilder:object:root=true
type KlusterletList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the Klusterlets.
	Items []Klusterlet `json:"items"`
}
