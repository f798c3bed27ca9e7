package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits and names of large payloads.
const (
	// ChunkNamePrefix starts the name of every ManifestChunk; the 64 hex
	// digits of the chunk's SHA-256 follow.
	ChunkNamePrefix = "sha256-"
	// DigestPrefix starts every digest of a ManifestPayload.
	DigestPrefix = "sha256:"
	// MaxChunkSize is the largest uncompressed size of one chunk (1 MiB):
	// compressed and base64-encoded, a chunk whose data does not compress
	// still fits the hub's 1.5 MiB etcd limit.
	MaxChunkSize = 1 << 20
	// MaxPayloadSize is the largest uncompressed size of a ManifestPayload
	// (256 MiB).
	MaxPayloadSize = 256 << 20
	// MaxChunks is the largest number of chunks one ManifestPayload lists.
	MaxChunks = 4096
)

// KindManifestPayload is the kind of the manifest that stands for a large
// payload in a ManifestWork.
const KindManifestPayload = "ManifestPayload"

// ManifestPayload is not a resource of the hub: it is the one manifest of a
// ManifestWork (or of a ManifestWorkReplicaSet's template) whose manifests
// are stored as ManifestChunks in the work's namespace. The work agent
// replaces it with the manifests of its chunks, once every chunk is present
// and verified, and applies them as the work's manifests. Because it is a
// manifest, a payload's change is a change of the work's spec: a new
// generation, a new rollout revision, a diff, an undo.
//
// The payload is the manifests' JSON, one manifest a line, cut into chunks
// in order.
type ManifestPayload struct {
	metav1.TypeMeta `json:",inline"`

	// metadata names the payload; only its name is used.
	Metadata metav1.ObjectMeta `json:"metadata"`

	// spec lists the chunks.
	Spec ManifestPayloadSpec `json:"spec"`
}

// ManifestPayloadSpec lists the chunks of a payload in order.
type ManifestPayloadSpec struct {
	// size is the uncompressed size of the payload in bytes: the sum of the
	// chunks' sizes.
	Size int64 `json:"size"`

	// manifests is the number of manifests in the payload.
	Manifests int64 `json:"manifests"`

	// chunks are the payload's chunks, in order.
	Chunks []ChunkRef `json:"chunks"`
}

// ChunkRef names one chunk of a payload.
type ChunkRef struct {
	// digest is "sha256:" followed by the hex SHA-256 of the chunk's
	// uncompressed content; the chunk's ManifestChunk is named
	// "sha256-" followed by the same digits.
	Digest string `json:"digest"`

	// size is the uncompressed size of the chunk in bytes.
	Size int64 `json:"size"`
}

// The condition the work agent sets on a ManifestWork whose manifest is a
// ManifestPayload, and its reasons.
const (
	// WorkPayloadStaged is True when every chunk of the work's current
	// generation is present and verified on the agent, which then applies
	// it; False while some are missing or one failed its digest, when the
	// cluster keeps the generation it ran before (the observedGeneration of
	// the work's Applied condition), complete.
	WorkPayloadStaged = "PayloadStaged"
	// ReasonPayloadVerified: every chunk is present and verified.
	ReasonPayloadVerified = "PayloadVerified"
	// ReasonChunksMissing: some chunks are not on the hub yet; the message
	// says how much of the payload is present.
	ReasonChunksMissing = "ChunksMissing"
	// ReasonChunkDigestMismatch: a chunk's content is not what its digest
	// says; the message names it.
	ReasonChunkDigestMismatch = "ChunkDigestMismatch"
	// ReasonChunkUnreadable: the hub refused a chunk to the agent, or could
	// not be reached; the message names the chunk and the hub's answer.
	ReasonChunkUnreadable = "ChunkUnreadable"
	// ReasonInvalidPayload: the ManifestPayload cannot be used (not the only
	// manifest, a bad digest or size, over a limit).
	ReasonInvalidPayload = "InvalidPayload"
)
