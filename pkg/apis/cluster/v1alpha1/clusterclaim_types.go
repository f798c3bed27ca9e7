package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterClaim is a fact a managed cluster states about itself, such as its
// platform or a unique identifier. It is cluster-scoped and lives on the
// managed cluster, not on the hub: the agent copies the claims into the
// status.clusterClaims of the cluster's ManagedCluster on the hub, where
// placements can select on them. Claims labeled
// open-cluster-management.io/spoke-only are not copied.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type ClusterClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the claimed value.
	// +optional
	Spec ClusterClaimSpec `json:"spec,omitempty"`
}

// ClusterClaimSpec is the value of a ClusterClaim.
type ClusterClaimSpec struct {
	// value is the claimed value, at most 1024 characters.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// ClusterClaimList is a list of ClusterClaims.
//
// +kubebuilder:object:root=true
type ClusterClaimList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ClusterClaims.
	Items []ClusterClaim `json:"items"`
}

// Well-known ClusterClaim names. The agent reports reserved claims before
// custom ones, which are limited in number.
const (
	// ClusterClaimID is a unique identifier of the cluster.
	ClusterClaimID = "id.k8s.io"
	// ClusterClaimKubeVersion is the Kubernetes version of the cluster.
	ClusterClaimKubeVersion = "kubeversion.open-cluster-management.io"
	// ClusterClaimPlatform is the platform the cluster runs on, such as AWS or GCP.
	ClusterClaimPlatform = "platform.open-cluster-management.io"
	// ClusterClaimProduct is the Kubernetes product, such as OpenShift, EKS or GKE.
	ClusterClaimProduct = "product.open-cluster-management.io"
	// ClusterClaimHostingCluster is the hub's name of the cluster the agent
	// runs on: the cluster itself, or its management cluster in the Hosted
	// modes (the Klusterlet's spec.deployOption.reportHostingCluster).
	ClusterClaimHostingCluster = "hosting-cluster.open-cluster-management.io"
)

// ReservedClusterClaimNames lists the reserved ClusterClaim names.
var ReservedClusterClaimNames = [...]string{
	ClusterClaimID,
	ClusterClaimKubeVersion,
	ClusterClaimPlatform,
	ClusterClaimProduct,
	ClusterClaimHostingCluster,
}

// ClusterClaimSpokeOnlyLabel on a ClusterClaim keeps the agent from reporting
// it to the hub.
const ClusterClaimSpokeOnlyLabel = "open-cluster-management.io/spoke-only"
