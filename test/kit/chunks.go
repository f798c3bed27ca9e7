package kit

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
)

// ChunkNames returns the names of the ManifestChunks in namespace ns, read
// as metadata only (their data can be megabytes).
func ChunkNames(ctx context.Context, c client.Reader, ns string) (map[string]bool, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(payloadv1alpha1.GroupVersion.WithKind("ManifestChunkList"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list.Items))
	for _, item := range list.Items {
		out[item.Name] = true
	}
	return out, nil
}
