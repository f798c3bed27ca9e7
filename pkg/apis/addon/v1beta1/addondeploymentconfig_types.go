package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnDeploymentConfig tunes how an add-on agent is deployed on managed
// clusters: variables for its manifests, node placement, registry mirrors,
// proxy settings, install namespace and container resources. Add-ons refer to
// it as configuration group addon.open-cluster-management.io, resource
// addondeploymentconfigs.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Namespaced
type AddOnDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the deployment configuration.
	// +required
	Spec AddOnDeploymentConfigSpec `json:"spec"`
}

// AddOnDeploymentConfigSpec is the deployment configuration of an add-on agent.
type AddOnDeploymentConfigSpec struct {
	// customizedVariables are name/value pairs the add-on's manifests are rendered with.
	// +optional
	// +listType=map
	// +listMapKey=name
	CustomizedVariables []CustomizedVariable `json:"customizedVariables,omitempty"`

	// nodePlacement is the node selector and tolerations of the agent's pods.
	// +optional
	NodePlacement *NodePlacement `json:"nodePlacement,omitempty"`

	// registries replace the registry of the agent's images with mirrors.
	// +optional
	Registries []ImageMirror `json:"registries,omitempty"`

	// proxyConfig is how the agent reaches the hub through an HTTP proxy.
	// +optional
	ProxyConfig ProxyConfig `json:"proxyConfig,omitempty"`

	// agentInstallNamespace is the managed-cluster namespace of the agent,
	// open-cluster-management-agent-addon unless set. Template add-ons read an
	// empty value as "the namespace in the AddOnTemplate".
	// +optional
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	AgentInstallNamespace string `json:"agentInstallNamespace,omitempty"`

	// resourceRequirements set requests and limits of agent containers; when
	// several entries match a container, the last one wins.
	// +optional
	// +listType=map
	// +listMapKey=containerID
	ResourceRequirements []ContainerResourceRequirements `json:"resourceRequirements,omitempty"`
}

// CustomizedVariable is a variable of an add-on's manifest templates.
type CustomizedVariable struct {
	// name is a letter or underscore followed by letters, digits and underscores.
	// +required
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][_a-zA-Z0-9]*$`
	Name string `json:"name"`

	// value of the variable, up to 1024 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// NodePlacement is where the pods of an add-on agent may be scheduled.
type NodePlacement struct {
	// nodeSelector restricts the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods onto tainted nodes.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ImageMirror makes an agent pull from a mirror instead of a source registry.
type ImageMirror struct {
	// mirror is the registry to pull from, for example quay.io/open-cluster-management.
	// +required
	Mirror string `json:"mirror"`

	// source is the registry replaced; empty replaces every registry.
	// +optional
	Source string `json:"source"`
}

// ProxyConfig is the HTTP proxy of an add-on agent.
type ProxyConfig struct {
	// httpProxy is the proxy URL for plain HTTP.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`

	// httpsProxy is the proxy URL for HTTPS.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`

	// caBundle is the PEM bundle that verifies the HTTPS proxy.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// noProxy lists, comma-separated, the hosts, IPs and CIDRs reached directly.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// ContainerResourceRequirements are the resources of the agent containers
// that a container ID matches.
type ContainerResourceRequirements struct {
	// containerID is <resource type>:<resource name>:<container name>, for
	// example deployments:helloworld-agent:agent; each part may be *.
	// +required
	// +kubebuilder:validation:Pattern=`^(deployments|daemonsets|statefulsets|replicasets|jobs|cronjobs|pods|\*):.+:.+$`
	ContainerID string `json:"containerID"`

	// resources are the requests and limits of the matched containers.
	// +required
	Resources corev1.ResourceRequirements `json:"resources"`
}

// AddOnDeploymentConfigList is a list of AddOnDeploymentConfigs.
//
// +kubebuilder:object:root=true
type AddOnDeploymentConfigList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the AddOnDeploymentConfigs.
	Items []AddOnDeploymentConfig `json:"items"`
}
