package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterManager is the install record of a hub: how its components
// (registration, work, placement and add-on management) were installed and
// configured, and their state. It is cluster-scoped; a hub has one, named
// cluster-manager.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type ClusterManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the configuration of the hub components.
	// +optional
	// +kubebuilder:default={deployOption: {mode: Default}}
	Spec ClusterManagerSpec `json:"spec"`

	// status reports the state of the hub components.
	// +optional
	Status ClusterManagerStatus `json:"status,omitempty"`
}

// ClusterManagerSpec is the configuration of the hub components.
type ClusterManagerSpec struct {
	// registrationImagePullSpec is the image of the registration controller.
	// Empty means the installer's default image.
	// +optional
	RegistrationImagePullSpec string `json:"registrationImagePullSpec,omitempty"`

	// workImagePullSpec is the image of the work controller.
	// +optional
	WorkImagePullSpec string `json:"workImagePullSpec,omitempty"`

	// placementImagePullSpec is the image of the placement controller.
	// +optional
	PlacementImagePullSpec string `json:"placementImagePullSpec,omitempty"`

	// addOnManagerImagePullSpec is the image of the add-on manager.
	// +optional
	AddOnManagerImagePullSpec string `json:"addOnManagerImagePullSpec,omitempty"`

	// nodePlacement sets where the hub components' pods are scheduled.
	// +optional
	NodePlacement NodePlacement `json:"nodePlacement,omitempty"`

	// deployOption says how the hub components are deployed. Default mode
	// when unset.
	// +optional
	// +kubebuilder:default={mode: Default}
	DeployOption ClusterManagerDeployOption `json:"deployOption,omitempty"`

	// registrationConfiguration configures cluster registration.
	// +optional
	RegistrationConfiguration *RegistrationHubConfiguration `json:"registrationConfiguration,omitempty"`

	// workConfiguration configures the work controller. Defaults to the kube work driver.
	// +optional
	// +kubebuilder:default={workDriver: kube}
	WorkConfiguration *WorkConfiguration `json:"workConfiguration,omitempty"`

	// addOnManagerConfiguration configures the add-on manager.
	// +optional
	AddOnManagerConfiguration *AddOnManagerConfiguration `json:"addOnManagerConfiguration,omitempty"`

	// placementConfiguration configures the placement controller.
	// +optional
	PlacementConfiguration *PlacementConfiguration `json:"placementConfiguration,omitempty"`

	// serverConfiguration configures OCM's gRPC/HTTPS server for agents.
	// This hub runs none (agents reach it through its API server): a
	// serverConfiguration that sets anything is not applied.
	// +optional
	ServerConfiguration *ServerConfiguration `json:"serverConfiguration,omitempty"`

	// resourceRequirement sets the resources of every hub container.
	// +optional
	ResourceRequirement *ResourceRequirement `json:"resourceRequirement,omitempty"`

	// networkPolicyConfiguration, when set, makes the operator apply
	// NetworkPolicies to the hub controller's Pod: it then accepts ingress
	// only on its webhook port and, from monitoringNamespace, on its metrics
	// port. Unset, the operator applies none and removes those it applied.
	// +optional
	NetworkPolicyConfiguration *NetworkPolicyConfiguration `json:"networkPolicyConfiguration,omitempty"`

	// tlsProfile is the TLS profile of the hub controller's TLS server (the
	// add-on conversion webhook and the hub tunnel). Each key it sets wins
	// over the same key of ConfigMap ocm-tls-profile in the operator's
	// namespace. OCM has no such field; it reads the ConfigMap only.
	// +optional
	TLSProfile *TLSProfile `json:"tlsProfile,omitempty"`

	// leaderElection sets the leader election timings of the hub controller; unset
	// fields keep its defaults. OCM has no such field.
	// +optional
	LeaderElection *LeaderElectionConfiguration `json:"leaderElection,omitempty"`
}

// ClusterManagerDeployOption says how the hub components are deployed.
type ClusterManagerDeployOption struct {
	// mode is Default (the components run on the hub) or Hosted (they run on
	// a management cluster and reach the hub through the Secret
	// external-hub-kubeconfig). It must not change once set.
	// +required
	// +kubebuilder:default=Default
	// +kubebuilder:validation:Enum=Default;Hosted
	Mode InstallMode `json:"mode,omitempty"`

	// default configures Default mode.
	// +optional
	Default *DefaultClusterManagerConfiguration `json:"default,omitempty"`

	// hosted configures Hosted mode.
	// +optional
	Hosted *HostedClusterManagerConfiguration `json:"hosted,omitempty"`
}

// ClusterManagerStatus is the observed state of the hub components.
type ClusterManagerStatus struct {
	// observedGeneration is the generation of the spec last acted upon.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions report the state: Applied, Progressing,
	// HubRegistrationDegraded, HubPlacementDegraded, MigrationSucceeded.
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

// ClusterManagerList is a list of ClusterManagers.
//
// +kubebuilder:object:root=true
type ClusterManagerList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ClusterManagers.
	Items []ClusterManager `json:"items"`
}
