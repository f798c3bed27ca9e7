package v1beta1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// AddOnTemplate defines an add-on by data alone: the manifests of its agent
// and the hub credentials the agent registers for. A ClusterManagementAddOn
// selects it as a configuration (group addon.open-cluster-management.io,
// resource addontemplates), and the add-on manager deploys the manifests to
// each enabled cluster in a ManifestWork. It is cluster-scoped.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="ADDON NAME",type=string,JSONPath=`.spec.addonName`
type AddOnTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the agent's manifests and registrations.
	// +required
	Spec AddOnTemplateSpec `json:"spec"`
}

// AddOnTemplateSpec is the content of an AddOnTemplate.
type AddOnTemplateSpec struct {
	// addonName is the add-on the template is for: its ClusterManagementAddOn's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	AddonName string `json:"addonName"`

	// agentSpec carries the agent's manifests, deployed on every cluster the
	// add-on is enabled on.
	// +required
	AgentSpec workv1.ManifestWorkSpec `json:"agentSpec"`

	// registration lists the hub credentials the agent obtains.
	// +optional
	Registration []RegistrationSpec `json:"registration,omitempty"`
}

// AddOnTemplateRegistrationType is the kind of hub credential a template
// add-on registers for.
type AddOnTemplateRegistrationType string

const (
	// RegistrationTypeKubeClient is a credential for the hub's kube-apiserver.
	RegistrationTypeKubeClient AddOnTemplateRegistrationType = "KubeClient"
	// RegistrationTypeCustomSigner is a certificate from a signer of the add-on's own.
	RegistrationTypeCustomSigner AddOnTemplateRegistrationType = "CustomSigner"
)

// RegistrationSpec is one hub credential of a template add-on's agent.
type RegistrationSpec struct {
	// type is KubeClient or CustomSigner; the field of the same name holds the details.
	// +required
	// +kubebuilder:validation:Enum=KubeClient;CustomSigner
	Type AddOnTemplateRegistrationType `json:"type"`

	// kubeClient details a KubeClient credential.
	// +optional
	KubeClient *KubeClientRegistrationConfig `json:"kubeClient,omitempty"`

	// customSigner details a CustomSigner credential; needed for that type.
	// +optional
	CustomSigner *CustomSignerRegistrationConfig `json:"customSigner,omitempty"`
}

// KubeClientRegistrationConfig details a KubeClient credential of a template add-on.
type KubeClientRegistrationConfig struct {
	// hubPermissions are the roles the agent's identity is bound to on the hub.
	// +optional
	HubPermissions []HubPermissionConfig `json:"hubPermissions,omitempty"`
}

// HubPermissionsBindingType is the namespace a hub permission is bound in.
type HubPermissionsBindingType string

const (
	// HubPermissionsBindingCurrentCluster binds in the namespace of the cluster itself.
	HubPermissionsBindingCurrentCluster HubPermissionsBindingType = "CurrentCluster"
	// HubPermissionsBindingSingleNamespace binds in one namespace named in the template.
	HubPermissionsBindingSingleNamespace HubPermissionsBindingType = "SingleNamespace"
)

// HubPermissionConfig is one role binding on the hub for a template add-on's agent.
type HubPermissionConfig struct {
	// type is CurrentCluster or SingleNamespace; the field of the same name
	// holds the details.
	// +required
	// +kubebuilder:validation:Enum=CurrentCluster;SingleNamespace
	Type HubPermissionsBindingType `json:"type"`

	// currentCluster details a CurrentCluster binding.
	// +optional
	CurrentCluster *CurrentClusterBindingConfig `json:"currentCluster,omitempty"`

	// singleNamespace details a SingleNamespace binding.
	// +optional
	SingleNamespace *SingleNamespaceBindingConfig `json:"singleNamespace,omitempty"`
}

// CurrentClusterBindingConfig binds a ClusterRole in each cluster's namespace.
type CurrentClusterBindingConfig struct {
	// clusterRoleName is the ClusterRole bound; it must exist on the hub.
	// +required
	// +kubebuilder:validation:MinLength=1
	ClusterRoleName string `json:"clusterRoleName"`
}

// SingleNamespaceBindingConfig binds a Role or ClusterRole in one namespace.
type SingleNamespaceBindingConfig struct {
	// namespace the binding is created in.
	// +required
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`

	// roleRef is the Role or ClusterRole bound; it must exist on the hub.
	// +required
	RoleRef rbacv1.RoleRef `json:"roleRef"`
}

// CustomSignerRegistrationConfig details a CustomSigner credential of a
// template add-on: the signer, the identity and the CA that signs.
type CustomSignerRegistrationConfig struct {
	// signerName is the signer the agent's CSR asks for, <domain>/<name>.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=571
	// +kubebuilder:validation:Pattern=`^([a-z0-9][a-z0-9-]*[a-z0-9]\.)+[a-z]+\/[a-z0-9-\.]+$`
	SignerName string `json:"signerName"`

	// subject is the identity in the certificate.
	// +optional
	Subject *AddOnTemplateSubject `json:"subject,omitempty"`

	// signingCA is the kubernetes.io/tls Secret on the hub whose key signs
	// the certificates.
	// +required
	SigningCA SigningCARef `json:"signingCA"`
}

// AddOnTemplateSubject is the identity in a template add-on's certificate.
type AddOnTemplateSubject struct {
	// user is the identity's user name.
	// +optional
	User string `json:"user"`

	// groups the identity belongs to.
	// +optional
	Groups []string `json:"groups,omitempty"`

	// organizationUnit lists the certificate's organizational units.
	// +optional
	OrganizationUnits []string `json:"organizationUnit,omitempty"`
}

// SigningCARef names the Secret holding a custom signer's CA.
type SigningCARef struct {
	// namespace of the Secret; the add-on manager's namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// name of the Secret.
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
