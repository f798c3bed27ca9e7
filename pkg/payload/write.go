package payload

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
)

// Written counts what Write sent.
type Written struct {
	// Chunks and Bytes are the chunks created (or replaced) and their
	// uncompressed size; StoredBytes their compressed size.
	Chunks, Bytes, StoredBytes int64
	// Kept is the number of chunks already present and verified.
	Kept int64
}

// Write creates the ManifestChunks of chunks in namespace with c, skipping
// each chunk already there: the same name is the same content. A chunk of
// the right name whose content fails its digest is replaced. Write the
// chunks before the ManifestWork that lists them, so that the work agent
// finds them complete.
func Write(ctx context.Context, c client.Client, namespace string, chunks []Chunk) (Written, error) {
	var w Written
	for _, chunk := range chunks {
		existing := &payloadv1alpha1.ManifestChunk{}
		err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: chunk.Name()}, existing)
		switch {
		case err == nil:
			if _, derr := Decode(existing, chunk.Ref); derr == nil {
				w.Kept++
				continue
			}
			if err := c.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); client.IgnoreNotFound(err) != nil {
				return w, fmt.Errorf("replace damaged ManifestChunk %s/%s: %w", namespace, chunk.Name(), err)
			}
		case !apierrors.IsNotFound(err):
			return w, fmt.Errorf("read ManifestChunk %s/%s: %w", namespace, chunk.Name(), err)
		}
		obj, err := Object(namespace, chunk)
		if err != nil {
			return w, err
		}
		if err := c.Create(ctx, obj); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Written meanwhile by another writer of the same payload.
				w.Kept++
				continue
			}
			return w, fmt.Errorf("create ManifestChunk %s/%s: %w", namespace, chunk.Name(), err)
		}
		w.Chunks++
		w.Bytes += chunk.Ref.Size
		w.StoredBytes += int64(len(obj.Spec.Data))
	}
	return w, nil
}
