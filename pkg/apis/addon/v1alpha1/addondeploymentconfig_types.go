package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddOnDeploymentConfig configures how an add-on agent is deployed: template
// variables, node placement, image registries, proxy, install namespace and
// resource requirements. ClusterManagementAddOns, install placements and
// ManagedClusterAddOns reference it as a configuration of group
// addon.open-cluster-management.io, resource addondeploymentconfigs.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type AddOnDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the deployment configuration.
	// +optional
	Spec AddOnDeploymentConfigSpec `json:"spec,omitempty"`
}

// AddOnDeploymentConfigSpec is the deployment configuration of an add-on agent.
type AddOnDeploymentConfigSpec struct {
	// customizedVariables are name/value pairs substituted into the add-on's
	// manifest templates.
	// +optional
	// +listType=map
	// +listMapKey=name
	CustomizedVariables []CustomizedVariable `json:"customizedVariables,omitempty"`

	// nodePlacement sets the node selector and tolerations of the agent's pods.
	// +optional
	NodePlacement *NodePlacement `json:"nodePlacement,omitempty"`

	// registries rewrite image references: images from a source registry are
	// pulled from its mirror.
	// +optional
	Registries []ImageMirror `json:"registries,omitempty"`

	// proxyConfig is the HTTP proxy configuration of the agent.
	// +optional
	ProxyConfig ProxyConfig `json:"proxyConfig,omitempty"`

	// agentInstallNamespace is the namespace on the managed cluster to install
	// the add-on agent in. Defaults to open-cluster-management-agent-addon.
	// +optional
	// +kubebuilder:default=open-cluster-management-agent-addon
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AgentInstallNamespace string `json:"agentInstallNamespace,omitempty"`

	// resourceRequirements set the resources of the agent's containers.
	// +optional
	// +listType=map
	// +listMapKey=containerID
	ResourceRequirements []ContainerResourceRequirements `json:"resourceRequirements,omitempty"`
}

// CustomizedVariable is a name/value pair for an add-on's manifest templates.
type CustomizedVariable struct {
	// name is the variable's name: a letter or underscore, then letters,
	// digits or underscores.
	// +required
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][_a-zA-Z0-9]*$`
	Name string `json:"name"`

	// value is the variable's value, at most 1024 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// NodePlacement sets where the pods of an agent are scheduled.
type NodePlacement struct {
	// nodeSelector is the pods' node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations are the pods' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ImageMirror redirects images of a source registry to a mirror.
type ImageMirror struct {
	// mirror is the registry images are pulled from instead, for example
	// quay.io/open-cluster-management.
	// +required
	Mirror string `json:"mirror"`

	// source is the registry being mirrored, for example quay.io/ocm.
	// +optional
	Source string `json:"source,omitempty"`
}

// ProxyConfig is the HTTP proxy configuration of an add-on agent.
type ProxyConfig struct {
	// httpProxy is the proxy for HTTP requests.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`

	// httpsProxy is the proxy for HTTPS requests.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`

	// caBundle is the PEM-encoded CA bundle of the HTTPS proxy.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// noProxy is a comma-separated list of hosts not to proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// ContainerResourceRequirements sets the resources of matching agent containers.
type ContainerResourceRequirements struct {
	// containerID selects containers as <resource>:<name>:<container>, for
	// example deployments:helloworld-agent:agent; each part may be * to match any.
	// +required
	// +kubebuilder:validation:Pattern=`^[^:]+:[^:]+:[^:]+$`
	ContainerID string `json:"containerID"`

	// resources are the containers' resource requests and limits.
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
