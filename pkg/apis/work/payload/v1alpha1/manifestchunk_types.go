package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManifestChunk is one piece of the payload of a large ManifestWork, in the
// work's namespace on the hub. Its name is the digest of its content
// (ChunkNamePrefix followed by the hex SHA-256 of the uncompressed bytes), so
// a chunk shared by two generations of a payload, or by two works of the
// same namespace, is stored and sent once. The work agent of the namespace's
// cluster may read chunks and never write them; it checks each chunk's
// digest against its name and the work's ManifestPayload before it applies
// anything.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mchunk
// +kubebuilder:printcolumn:name="Encoding",type=string,JSONPath=`.spec.encoding`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule=`self.metadata.name.matches('^sha256-[0-9a-f]{64}$')`,message="a ManifestChunk is named sha256-<the 64 hex digits of the SHA-256 of its uncompressed content>"
type ManifestChunk struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the chunk's content.
	// +required
	Spec ManifestChunkSpec `json:"spec"`
}

// ManifestChunkSpec is the content of one chunk.
type ManifestChunkSpec struct {
	// encoding is how data is compressed: gzip, or identity for none.
	// +optional
	// +kubebuilder:default=gzip
	// +kubebuilder:validation:Enum=gzip;identity
	Encoding Encoding `json:"encoding,omitempty"`

	// size is the length in bytes of the uncompressed content, at most
	// MaxChunkSize.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	Size int64 `json:"size"`

	// data is the content, compressed as encoding says: at most 1 MiB, so
	// that a chunk stays well inside the hub's request and etcd limits.
	// +required
	// +kubebuilder:validation:MaxLength=1398104
	Data []byte `json:"data"`
}

// Encoding is how a chunk's data is compressed.
type Encoding string

const (
	// EncodingGzip is data compressed with gzip (RFC 1952).
	EncodingGzip Encoding = "gzip"
	// EncodingIdentity is data stored as it is.
	EncodingIdentity Encoding = "identity"
)

// +kubebuilder:object:root=true

// ManifestChunkList is a list of ManifestChunks.
type ManifestChunkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManifestChunk `json:"items"`
}
