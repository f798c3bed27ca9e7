package workreport

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// Payload is the state of a large work's payload: what its ManifestPayload
// lists, and how far the cluster's work agent staged it, from the work's
// PayloadStaged condition.
type Payload struct {
	// Size is the payload's uncompressed size in bytes, Chunks the number
	// of its chunks and Manifests the number of its manifests.
	Size      int64 `json:"size"`
	Chunks    int64 `json:"chunks"`
	Manifests int64 `json:"manifests"`
	// Staged is the status of PayloadStaged for the work's generation:
	// True, False, or empty while the agent has not reported on it.
	Staged string `json:"staged,omitempty"`
	// Reason is the reason of PayloadStaged for the work's generation:
	// PayloadVerified, ChunksMissing, ChunkDigestMismatch or
	// InvalidPayload.
	Reason string `json:"reason,omitempty"`
	// PresentChunks is how many chunks the agent found present and
	// verified, while it waits for the others (ChunksMissing).
	PresentChunks *int64 `json:"presentChunks,omitempty"`
	// Message is the message of PayloadStaged for the work's generation.
	Message string `json:"message,omitempty"`
}

// PayloadOf returns the payload of work's spec, nil when its manifests are
// ordinary ones. A ManifestPayload that is not valid is reported with
// reason InvalidPayload and what is wrong, as the agent would report it.
func PayloadOf(work *workv1.ManifestWork) *Payload {
	return payloadOf(&work.Spec, work.Status.Conditions, work.Generation)
}

// TemplatePayload returns the payload of a ManifestWorkReplicaSet's
// template (nothing is staged for a template), nil when its manifests are
// ordinary ones.
func TemplatePayload(template *workv1.ManifestWorkSpec) *Payload {
	return payloadOf(template, nil, 0)
}

// payloadOf is PayloadOf for a spec, the conditions of its work and the
// work's generation.
func payloadOf(spec *workv1.ManifestWorkSpec, conds []metav1.Condition, generation int64) *Payload {
	p, err := payload.Of(spec)
	switch {
	case err != nil:
		return &Payload{Reason: payloadv1alpha1.ReasonInvalidPayload, Message: err.Error()}
	case p == nil:
		return nil
	}
	out := &Payload{Size: p.Spec.Size, Chunks: int64(len(p.Spec.Chunks)), Manifests: p.Spec.Manifests}
	c := meta.FindStatusCondition(conds, payloadv1alpha1.WorkPayloadStaged)
	if c == nil || c.ObservedGeneration != generation {
		// The agent has not reported on this generation yet.
		return out
	}
	out.Staged, out.Reason, out.Message = string(c.Status), c.Reason, c.Message
	if c.Status == metav1.ConditionTrue {
		out.PresentChunks = &out.Chunks
	} else if present, total, ok := payload.ChunksPresent(c.Message); ok && total == out.Chunks {
		out.PresentChunks = &present
	}
	return out
}

// Refused says whether the agent refused the payload (a chunk that fails
// its digest, a ManifestPayload that is not valid): it applies nothing of
// it until the chunk or the spec is written again.
func (p *Payload) Refused() bool {
	return p.Reason == payloadv1alpha1.ReasonChunkDigestMismatch || p.Reason == payloadv1alpha1.ReasonInvalidPayload
}

// Summary says in one line what the payload is and how far it is staged,
// such as "50.2 MiB in 380 chunks, 212 of 380 present".
func (p *Payload) Summary() string {
	if p.Chunks == 0 {
		return "invalid: " + p.Message
	}
	size := fmt.Sprintf("%s in %d chunks", MiB(p.Size), p.Chunks)
	switch {
	case p.Staged == string(metav1.ConditionTrue):
		return size + ", staged"
	case p.Reason == payloadv1alpha1.ReasonChunksMissing && p.PresentChunks != nil:
		return fmt.Sprintf("%s, %d of %d present", size, *p.PresentChunks, p.Chunks)
	case p.Staged == string(metav1.ConditionFalse):
		return size + ", " + p.Reason
	}
	return size
}

// MiB writes a size in bytes as MiB with one decimal, as the work agent's
// PayloadStaged messages do.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
