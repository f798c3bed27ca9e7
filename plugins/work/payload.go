package work

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// largePayload is the payload of manifests over the limit of one
// ManifestWork, split once for every work written: its chunks and the one
// manifest that stands for them.
type largePayload struct {
	chunks   []payload.Chunk
	manifest workv1.Manifest
}

// sizeLimit is the limit ValidateManifests checks: a ManifestWork's, or a
// large payload's when the manifests are over a ManifestWork's.
func sizeLimit(manifests []cli.Manifest) int {
	total := 0
	for _, m := range manifests {
		total += m.Size
	}
	if total > workv1.DefaultManifestsSizeLimit {
		return payloadv1alpha1.MaxPayloadSize
	}
	return workv1.DefaultManifestsSizeLimit
}

// packPayload replaces the manifests of spec with a ManifestPayload when they
// are over the limit of one ManifestWork, splitting them into chunks on the
// first call; smaller manifests are left as they are, in OCM's form.
func (o *CreateOptions) packPayload(spec *workv1.ManifestWorkSpec) error {
	if o.payload == nil {
		size := 0
		for _, m := range spec.Workload.Manifests {
			raw, err := m.MarshalJSON()
			if err != nil {
				return fmt.Errorf("encode manifest: %w", err)
			}
			size += len(raw)
		}
		if size <= workv1.DefaultManifestsSizeLimit {
			return nil
		}
		ref, chunks, err := payload.Split(o.Name, spec.Workload.Manifests)
		if err != nil {
			return err
		}
		m, err := payload.Manifest(ref)
		if err != nil {
			return err
		}
		o.payload = &largePayload{chunks: chunks, manifest: m}
	}
	spec.Workload.Manifests = []workv1.Manifest{o.payload.manifest}
	return nil
}

// writeChunks writes the chunks of a large payload that namespace lacks,
// before the work or set that lists them; nothing for a small work or a dry
// run.
func (o *CreateOptions) writeChunks(ctx context.Context, c client.Client, namespace string) error {
	if o.payload == nil || o.DryRun != cli.DryRunNone {
		return nil
	}
	w, err := payload.Write(ctx, c, namespace, o.payload.chunks)
	if err != nil {
		return fmt.Errorf("write the payload of %s to namespace %s: %w", o.Name, namespace, err)
	}
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "Payload of %s: %d chunks written to namespace %s (%d bytes, %d stored), %d already there\n",
			o.Name, w.Chunks, namespace, w.Bytes, w.StoredBytes, w.Kept)
	}
	return nil
}
