// Package workpayload is how the verbs of `kubectl ocm work` handle
// manifests over the limit of one ManifestWork: they go as a large payload
// (pkg/payload), split once, whose chunks are written to each namespace
// that lacks them with progress; and a work's manifests are read back from
// its payload's chunks to compare two payloads.
package workpayload

import (
	"context"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// SizeLimit is the limit cli.ValidateManifests checks: a ManifestWork's, or
// a large payload's when the manifests are over a ManifestWork's.
func SizeLimit(manifests []cli.Manifest) int {
	total := 0
	for _, m := range manifests {
		total += m.Size
	}
	if total > workv1.DefaultManifestsSizeLimit {
		return payloadv1alpha1.MaxPayloadSize
	}
	return workv1.DefaultManifestsSizeLimit
}

// Payload is manifests over the limit of one ManifestWork, split once into
// chunks, and the one manifest, a ManifestPayload, that stands for them.
type Payload struct {
	// Name names the ManifestPayload: the work's or the set's name.
	Name string
	// Chunks are the payload's chunks, in order.
	Chunks []payload.Chunk
	// Manifest is the ManifestPayload, as the one manifest of a work.
	Manifest workv1.Manifest
	// Spec is the ManifestPayload's spec.
	Spec payloadv1alpha1.ManifestPayloadSpec
}

// Pack returns the payload of manifests, named name, when their JSON is
// over the limit of one ManifestWork; nil when they fit in one, where they
// stay in OCM's form.
func Pack(name string, manifests []workv1.Manifest) (*Payload, error) {
	size := 0
	for _, m := range manifests {
		raw, err := m.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode manifest: %w", err)
		}
		size += len(raw)
	}
	if size <= workv1.DefaultManifestsSizeLimit {
		return nil, nil
	}
	ref, chunks, err := payload.Split(name, manifests)
	if err != nil {
		return nil, err
	}
	m, err := payload.Manifest(ref)
	if err != nil {
		return nil, err
	}
	return &Payload{Name: name, Chunks: chunks, Manifest: m, Spec: ref.Spec}, nil
}

// progressSteps is how many lines of progress Write prints at most.
const progressSteps = 10

// Write writes with c the chunks namespace lacks (payload.Write), a tenth of
// them at a time, printing to progress how many of the chunks are there
// after each tenth, such as "Writing the payload of web to namespace
// cluster1: 120 of 380 chunks (15.8 of 50.2 MiB)".
func (p *Payload) Write(ctx context.Context, c client.Client, namespace string, progress io.Writer) (payload.Written, error) {
	var total payload.Written
	step := (len(p.Chunks) + progressSteps - 1) / progressSteps
	var bytes int64
	for start := 0; start < len(p.Chunks); start += step {
		batch := p.Chunks[start:min(start+step, len(p.Chunks))]
		w, err := payload.Write(ctx, c, namespace, batch)
		total.Chunks += w.Chunks
		total.Bytes += w.Bytes
		total.StoredBytes += w.StoredBytes
		total.Kept += w.Kept
		if err != nil {
			return total, fmt.Errorf("write the payload of %s to namespace %s: %w", p.Name, namespace, err)
		}
		for _, chunk := range batch {
			bytes += chunk.Ref.Size
		}
		fmt.Fprintf(progress, "Writing the payload of %s to namespace %s: %d of %d chunks (%.1f of %.1f MiB)\n",
			p.Name, namespace, start+len(batch), len(p.Chunks), float64(bytes)/(1<<20), float64(p.Spec.Size)/(1<<20))
	}
	return total, nil
}

// Summary says what Write did in namespace: the chunks written, and those
// already on the hub.
func (p *Payload) Summary(namespace string, w payload.Written) string {
	return fmt.Sprintf("Payload of %s: %d chunks written to namespace %s (%.1f MiB, %.1f MiB stored), %d already on the hub",
		p.Name, w.Chunks, namespace, float64(w.Bytes)/(1<<20), float64(w.StoredBytes)/(1<<20), w.Kept)
}

// Manifests returns the manifests of spec, in order: its own, or, when its
// one manifest is a ManifestPayload, those of the payload's chunks, read
// from namespace with reader and each checked against its digest. A chunk
// that is missing or fails its digest is an error that names it.
func Manifests(ctx context.Context, reader client.Reader, namespace string, spec *workv1.ManifestWorkSpec) ([]workv1.Manifest, error) {
	p, err := payload.Of(spec)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return spec.Workload.Manifests, nil
	}
	get := func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		chunk := &payloadv1alpha1.ManifestChunk{}
		return chunk, reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, chunk)
	}
	manifests, progress, err := payload.Load(ctx, &p.Spec, get)
	var digestErr *payload.DigestError
	switch {
	case errors.As(err, &digestErr):
		return nil, fmt.Errorf("its payload cannot be read: %w", err)
	case err != nil:
		return nil, fmt.Errorf("read its payload from namespace %s: %w", namespace, err)
	case !progress.Complete():
		return nil, fmt.Errorf("its payload is not whole in namespace %s: %s; missing %v: write the payload again (kubectl ocm work create writes the chunks a namespace lacks)",
			namespace, progress, progress.Missing)
	}
	return manifests, nil
}
