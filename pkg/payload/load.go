package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// digestPattern is a valid digest of a ManifestPayload's chunk.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidChunkName reports whether name is the name of a ManifestChunk:
// ChunkNamePrefix and the 64 lowercase hex digits of a SHA-256.
func ValidChunkName(name string) bool {
	digest, ok := strings.CutPrefix(name, payloadv1alpha1.ChunkNamePrefix)
	return ok && digestPattern.MatchString(payloadv1alpha1.DigestPrefix+digest)
}

// Of returns the ManifestPayload of spec when its manifests are one
// ManifestPayload, nil when spec holds ordinary manifests, and an error when
// a ManifestPayload is not the only manifest or is not valid.
func Of(spec *workv1.ManifestWorkSpec) (*payloadv1alpha1.ManifestPayload, error) {
	var found *payloadv1alpha1.ManifestPayload
	for i, m := range spec.Workload.Manifests {
		raw, err := manifestJSON(m)
		if err != nil {
			continue // the apply path reports it
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if json.Unmarshal(raw, &tm) != nil || tm.Kind != payloadv1alpha1.KindManifestPayload ||
			tm.APIVersion != payloadv1alpha1.GroupVersion.String() {
			continue
		}
		if len(spec.Workload.Manifests) != 1 {
			return nil, fmt.Errorf("spec.workload.manifests[%d] is a ManifestPayload, which must be the only manifest of its work: "+
				"put the other %d manifests into the payload", i, len(spec.Workload.Manifests)-1)
		}
		p := &payloadv1alpha1.ManifestPayload{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("spec.workload.manifests[%d]: ManifestPayload cannot be read: %w", i, err)
		}
		if err := Validate(&p.Spec); err != nil {
			return nil, fmt.Errorf("spec.workload.manifests[%d]: %w", i, err)
		}
		found = p
	}
	return found, nil
}

// Validate checks a ManifestPayload's chunk list: digests, sizes and limits.
func Validate(spec *payloadv1alpha1.ManifestPayloadSpec) error {
	if len(spec.Chunks) == 0 {
		return errors.New("ManifestPayload lists no chunks")
	}
	if len(spec.Chunks) > payloadv1alpha1.MaxChunks {
		return fmt.Errorf("ManifestPayload lists %d chunks, over the limit of %d: split the manifests across several ManifestWorks",
			len(spec.Chunks), payloadv1alpha1.MaxChunks)
	}
	var total int64
	for i, c := range spec.Chunks {
		if !digestPattern.MatchString(c.Digest) {
			return fmt.Errorf("ManifestPayload chunks[%d].digest %q is not sha256: followed by 64 lowercase hex digits", i, c.Digest)
		}
		if c.Size < 1 || c.Size > payloadv1alpha1.MaxChunkSize {
			return fmt.Errorf("ManifestPayload chunks[%d].size %d is not between 1 and %d", i, c.Size, payloadv1alpha1.MaxChunkSize)
		}
		total += c.Size
	}
	if total != spec.Size {
		return fmt.Errorf("ManifestPayload size %d is not the sum of its chunks' sizes (%d)", spec.Size, total)
	}
	if total > payloadv1alpha1.MaxPayloadSize {
		return fmt.Errorf("ManifestPayload size %d is over the limit of %d MiB: split the manifests across several ManifestWorks",
			total, payloadv1alpha1.MaxPayloadSize>>20)
	}
	return nil
}

// Getter reads the ManifestChunk of a name from the work's namespace; a
// missing chunk is a NotFound error.
type Getter func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error)

// Progress says how much of a payload is present and verified.
type Progress struct {
	// Chunks and Bytes are the payload's totals.
	Chunks, Bytes int64
	// PresentChunks and PresentBytes are those present and verified.
	PresentChunks, PresentBytes int64
	// Missing names the first missing chunks (at most 5).
	Missing []string
}

// Complete says whether every chunk is present and verified.
func (p Progress) Complete() bool { return p.PresentChunks == p.Chunks }

// String says how much is present, for a condition's message.
func (p Progress) String() string {
	return fmt.Sprintf("%d of %d chunks (%s of %s) present and verified", p.PresentChunks, p.Chunks, mib(p.PresentBytes), mib(p.Bytes))
}

// mib prints a size in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Walk fetches every chunk of spec with get, in order, verifies it, and
// passes each manifest of the payload to fn as its JSON, holding one chunk
// and one manifest at a time. After a missing chunk it goes on fetching and
// verifying the others, to count them, without calling fn again. It returns
// the progress, and the first error of get other than NotFound, of
// verification (a *DigestError) or of fn.
func Walk(ctx context.Context, spec *payloadv1alpha1.ManifestPayloadSpec, get Getter, fn func(manifest []byte) error) (Progress, error) {
	_, p, err := Scan(ctx, spec, Reader(get), func(_ int, manifest []byte) error { return fn(manifest) })
	return p, err
}

// Load returns the manifests of the payload when every chunk is present and
// verified, or nil manifests and the progress when some are missing. Its
// errors are those of Walk, and a manifest count that differs from the
// payload's.
func Load(ctx context.Context, spec *payloadv1alpha1.ManifestPayloadSpec, get Getter) ([]workv1.Manifest, Progress, error) {
	out := make([]workv1.Manifest, 0, spec.Manifests)
	p, err := Walk(ctx, spec, get, func(raw []byte) error {
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: bytes.Clone(raw)}})
		return nil
	})
	if err != nil || !p.Complete() {
		return nil, p, err
	}
	if int64(len(out)) != spec.Manifests {
		return nil, p, fmt.Errorf("the payload holds %d manifests, its ManifestPayload lists %d", len(out), spec.Manifests)
	}
	return out, p, nil
}

// Listed returns the names of the ManifestChunks spec's ManifestPayload
// lists: none when spec holds ordinary manifests or a payload that is not
// valid (its agent refuses it, and nothing of it is read).
func Listed(spec *workv1.ManifestWorkSpec) []string {
	p, err := Of(spec)
	if err != nil || p == nil {
		return nil
	}
	names := make([]string, 0, len(p.Spec.Chunks))
	for _, c := range p.Spec.Chunks {
		names = append(names, ChunkName(c.Digest))
	}
	return names
}
