package v1alpha1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// AddOnTemplate describes an add-on without code: the manifests of its agent
// and how the agent registers to the hub. A ClusterManagementAddOn uses it by
// listing it as a configuration (group addon.open-cluster-management.io,
// resource addontemplates); the add-on manager then deploys the manifests to
// each enabled cluster with a ManifestWork. It is cluster-scoped.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="ADDON NAME",type=string,JSONPath=`.spec.addonName`
type AddOnTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the add-on's agent and registration.
	// +required
	Spec AddOnTemplateSpec `json:"spec"`
}

// AddOnTemplateSpec describes a template-based add-on.
type AddOnTemplateSpec struct {
	// addonName is the name of the add-on, the name of its ClusterManagementAddOn.
	// +required
	// +kubebuilder:validation:MinLength=1
	AddonName string `json:"addonName"`

	// agentSpec holds the manifests of the add-on agent, deployed to every
	// enabled cluster.
	// +required
	AgentSpec workv1.ManifestWorkSpec `json:"agentSpec"`

	// registration lists the hub credentials of the agent.
	// +optional
	Registration []RegistrationSpec `json:"registration,omitempty"`
}

// RegistrationType is the kind of hub credential of an add-on agent.
type RegistrationType string

const (
	// RegistrationTypeKubeClient is a kube-apiserver client certificate (or token).
	RegistrationTypeKubeClient RegistrationType = "KubeClient"
	// RegistrationTypeCustomSigner is a client certificate from a custom signer.
	RegistrationTypeCustomSigner RegistrationType = "CustomSigner"
)

// RegistrationSpec is one hub credential of a template-based add-on agent.
type RegistrationSpec struct {
	// type is KubeClient or CustomSigner.
	// +required
	// +kubebuilder:validation:Enum=KubeClient;CustomSigner
	Type RegistrationType `json:"type"`

	// kubeClient configures a KubeClient credential.
	// +optional
	KubeClient *KubeClientRegistrationConfig `json:"kubeClient,omitempty"`

	// customSigner configures a CustomSigner credential.
	// +optional
	CustomSigner *CustomSignerRegistrationConfig `json:"customSigner,omitempty"`
}

// KubeClientRegistrationConfig configures a KubeClient credential.
type KubeClientRegistrationConfig struct {
	// hubPermissions are the permissions granted on the hub to the agent's identity.
	// +optional
	HubPermissions []HubPermissionConfig `json:"hubPermissions,omitempty"`
}

// HubPermissionsBindingType is where a hub permission of an add-on agent is bound.
type HubPermissionsBindingType string

const (
	// HubPermissionsBindingCurrentCluster binds a ClusterRole in the cluster's own namespace.
	HubPermissionsBindingCurrentCluster HubPermissionsBindingType = "CurrentCluster"
	// HubPermissionsBindingSingleNamespace binds a role in one fixed namespace.
	HubPermissionsBindingSingleNamespace HubPermissionsBindingType = "SingleNamespace"
)

// HubPermissionConfig is a permission on the hub for an add-on agent.
type HubPermissionConfig struct {
	// type is CurrentCluster (bind in the cluster namespace) or
	// SingleNamespace (bind in a fixed namespace).
	// +required
	// +kubebuilder:validation:Enum=CurrentCluster;SingleNamespace
	Type HubPermissionsBindingType `json:"type"`

	// currentCluster configures a CurrentCluster binding.
	// +optional
	CurrentCluster *CurrentClusterBindingConfig `json:"currentCluster,omitempty"`

	// singleNamespace configures a SingleNamespace binding.
	// +optional
	SingleNamespace *SingleNamespaceBindingConfig `json:"singleNamespace,omitempty"`
}

// CurrentClusterBindingConfig binds a ClusterRole in the cluster namespace.
type CurrentClusterBindingConfig struct {
	// clusterRoleName is the ClusterRole to bind.
	// +required
	// +kubebuilder:validation:MinLength=1
	ClusterRoleName string `json:"clusterRoleName"`
}

// SingleNamespaceBindingConfig binds a role in a fixed namespace.
type SingleNamespaceBindingConfig struct {
	// namespace is where the role is bound.
	// +required
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`

	// roleRef is the Role or ClusterRole to bind.
	// +required
	RoleRef rbacv1.RoleRef `json:"roleRef"`
}

// CustomSignerRegistrationConfig configures a client certificate from a custom signer.
type CustomSignerRegistrationConfig struct {
	// signerName is the signer of the agent's CSR; it may not be
	// kubernetes.io/kube-apiserver-client.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	SignerName string `json:"signerName"`

	// subject is the identity in the certificate.
	// +optional
	Subject *Subject `json:"subject,omitempty"`

	// signingCA is the Secret (kubernetes.io/tls) on the hub holding the CA
	// that signs the certificates.
	// +required
	SigningCA SigningCARef `json:"signingCA"`
}

// SigningCARef names the Secret of a custom signer's CA.
type SigningCARef struct {
	// namespace is the Secret's namespace; defaults to the add-on manager's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// AddOnTemplateList is a list of AddOnTemplates.
//
// +kubebuilder:object:root=true
type AddOnTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the AddOnTemplates.
	Items []AddOnTemplate `json:"items"`
}
