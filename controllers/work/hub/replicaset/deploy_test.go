package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// payloadSpec splits n ConfigMaps of 8 KiB into a payload: its chunks and
// the work spec that lists them.
func payloadSpec(t *testing.T, n int) ([]payload.Chunk, *workv1.ManifestWorkSpec) {
	t.Helper()
	manifests := make([]workv1.Manifest, n)
	for i := range manifests {
		raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "app"},
			"data":     map[string]string{"v": fmt.Sprintf("%d-%s", i, strings.Repeat("x", 8<<10))}})
		require.NoError(t, err)
		manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	ref, chunks, err := payload.Split("app", manifests)
	require.NoError(t, err)
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	return chunks, &workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m}}}
}

// TestCheckChunks holds a cluster's work back while a chunk of its payload
// is missing from the set's namespace or fails its digest there, naming
// the chunk; copies nothing anywhere; and reads each chunk whole once.
func TestCheckChunks(t *testing.T) {
	ctx := context.Background()
	chunks, spec := payloadSpec(t, 10)
	require.Greater(t, len(chunks), 2)
	tests := []struct {
		name    string
		change  func(t *testing.T, c client.Client)
		wantErr string
		as      any
	}{
		{"complete", func(*testing.T, client.Client) {}, "", nil},
		{"missing", func(t *testing.T, c client.Client) {
			obj := &payloadv1alpha1.ManifestChunk{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "set", Name: chunks[1].Name()}, obj))
			require.NoError(t, c.Delete(ctx, obj))
		}, "write every chunk of the payload before the work or template that lists it", &payload.MissingChunkError{}},
		{"damaged", func(t *testing.T, c client.Client) {
			obj := &payloadv1alpha1.ManifestChunk{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "set", Name: chunks[1].Name()}, obj))
			obj.Spec.Encoding, obj.Spec.Data = payloadv1alpha1.EncodingIdentity, []byte("x")
			require.NoError(t, c.Update(ctx, obj))
		}, "delete it and write it again", &payload.DigestError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
			_, err := payload.Write(ctx, base, "set", chunks)
			require.NoError(t, err)
			tt.change(t, base)
			reads, creates := 0, 0
			c := interceptor.NewClient(base, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, whole := obj.(*payloadv1alpha1.ManifestChunk); whole {
						reads++
					}
					return c.Get(ctx, key, obj, opts...)
				},
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					creates++
					return c.Create(ctx, obj, opts...)
				},
			})
			r := &Reconciler{Client: c}
			err = r.checkChunks(ctx, "set", "cluster1", spec)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, len(chunks), reads, "every chunk read whole once")
				require.NoError(t, r.checkChunks(ctx, "set", "cluster2", spec))
				assert.Equal(t, len(chunks), reads, "a verified chunk is not read again")
			} else {
				require.ErrorContains(t, err, chunks[1].Name())
				require.ErrorContains(t, err, tt.wantErr)
				switch want := tt.as.(type) {
				case *payload.MissingChunkError:
					assert.True(t, errors.As(err, &want))
				case *payload.DigestError:
					assert.True(t, errors.As(err, &want))
				}
			}
			assert.Zero(t, creates, "nothing is copied")
		})
	}
}
