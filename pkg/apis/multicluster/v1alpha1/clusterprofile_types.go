package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The labels and condition types the Cluster Inventory API defines.
const (
	// LabelClusterManagerKey names the cluster manager that writes a
	// ClusterProfile; its value equals spec.clusterManager.name.
	LabelClusterManagerKey = "x-k8s.io/cluster-manager"
	// LabelClusterSetKey names the cluster set a ClusterProfile belongs to.
	LabelClusterSetKey = "multicluster.x-k8s.io/clusterset"
	// ClusterConditionControlPlaneHealthy reports whether the cluster's
	// control plane is healthy.
	ClusterConditionControlPlaneHealthy = "ControlPlaneHealthy"
)

// ClusterProfile represents a single cluster in a multi-cluster deployment.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Manager",type=string,JSONPath=`.spec.clusterManager.name`
// +kubebuilder:printcolumn:name="Healthy",type=string,JSONPath=`.status.conditions[?(@.type=="ControlPlaneHealthy")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the cluster's identity as its cluster manager states it.
	// +required
	Spec ClusterProfileSpec `json:"spec"`

	// Status is what the cluster manager observes of the cluster.
	// +optional
	Status ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec names the cluster and its cluster manager.
type ClusterProfileSpec struct {
	// DisplayName is a human-readable name of the cluster.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// ClusterManager is the cluster manager that writes this profile.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ClusterManager is immutable"
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager identifies a cluster manager.
type ClusterManager struct {
	// Name of the cluster manager, such as open-cluster-management.
	// +required
	Name string `json:"name"`
}

// ClusterProfileStatus is what the cluster manager observes of the cluster.
type ClusterProfileStatus struct {
	// Conditions describe the cluster's health and membership.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Version holds the versions of the cluster's components.
	// +optional
	Version ClusterVersion `json:"version,omitempty"`

	// Properties are name/value facts about the cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	Properties []Property `json:"properties,omitempty"`

	// AccessProviders say how to reach the cluster's API server: each names
	// a provider of credentials and the cluster's endpoint and CA.
	// +optional
	// +listType=map
	// +listMapKey=name
	AccessProviders []AccessProvider `json:"accessProviders,omitempty"`
}

// ClusterVersion holds the versions of the cluster's components.
type ClusterVersion struct {
	// Kubernetes is the version of the cluster's API server.
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Property is one name/value fact about the cluster.
type Property struct {
	// Name of the property, a domain-prefixed name such as id.k8s.io.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Value of the property.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`

	// LastObservedTime is when the value was last observed.
	// +optional
	LastObservedTime *metav1.Time `json:"lastObservedTime,omitempty"`
}

// AccessProvider is one way to reach the cluster's API server.
type AccessProvider struct {
	// Name of the provider of credentials for Cluster.
	// +required
	Name string `json:"name"`

	// Cluster is the API server's endpoint and CA, with the field names of
	// a kubeconfig's cluster entry.
	// +optional
	Cluster Cluster `json:"cluster,omitempty"`
}

// Cluster is the endpoint of an API server, as a kubeconfig's cluster entry
// (k8s.io/client-go/tools/clientcmd/api/v1 Cluster) holds it.
type Cluster struct {
	// Server is the API server's URL (https://host:port).
	Server string `json:"server"`
	// TLSServerName is the name the server's certificate is checked against.
	// +optional
	TLSServerName string `json:"tls-server-name,omitempty"`
	// InsecureSkipTLSVerify skips the check of the server's certificate.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecure-skip-tls-verify,omitempty"`
	// CertificateAuthorityData is the PEM CA bundle of the server's certificate.
	// +optional
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	// ProxyURL is the proxy the client uses to reach the server.
	// +optional
	ProxyURL string `json:"proxy-url,omitempty"`
	// Extensions hold extra information for clients, such as the
	// configuration client-go hands to an exec credential plugin
	// (client.authentication.k8s.io/exec).
	// +optional
	// +listType=map
	// +listMapKey=name
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

// NamedExtension is one named extension of a Cluster, as in a kubeconfig.
type NamedExtension struct {
	// Name of the extension.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Extension holds the extension's data.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	Extension runtime.RawExtension `json:"extension"`
}

// ClusterProfileList is a list of ClusterProfiles.
//
// +kubebuilder:object:root=true
type ClusterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterProfiles.
	Items []ClusterProfile `json:"items"`
}
