package payload

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
)

// TestCopyResumesAfterAFailure copies a payload from a set's namespace to a
// cluster's, failing the third write as a hub that goes away would: the copy
// stops with the error, and the next copy writes only what is missing.
func TestCopyResumesAfterAFailure(t *testing.T) {
	ctx := context.Background()
	ref, chunks, err := Split("app", manifests(40, 8<<10))
	require.NoError(t, err)
	require.Greater(t, len(chunks), 3)
	base := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
	_, err = Write(ctx, base, "set", chunks)
	require.NoError(t, err)

	creates := 0
	failing := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			if creates == 3 {
				return errors.New("connection reset by peer")
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	w, err := Copy(ctx, failing, failing, "set", "cluster1", &ref.Spec)
	require.ErrorContains(t, err, "connection reset by peer")
	assert.Equal(t, int64(2), w.Chunks)

	w, err = Copy(ctx, failing, failing, "set", "cluster1", &ref.Spec)
	require.NoError(t, err)
	assert.Equal(t, int64(2), w.Kept)
	assert.Equal(t, int64(len(chunks)-2), w.Chunks)
	got, p, err := Load(ctx, &ref.Spec, func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		obj := &payloadv1alpha1.ManifestChunk{}
		return obj, base.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: name}, obj)
	})
	require.NoError(t, err)
	assert.True(t, p.Complete())
	assert.Len(t, got, 40)
}

// TestCopyRefusesAMissingOrDamagedSource refuses to copy a payload whose
// source chunk is missing or fails its digest, naming the chunk.
func TestCopyRefusesAMissingOrDamagedSource(t *testing.T) {
	ctx := context.Background()
	ref, chunks, err := Split("app", manifests(10, 8<<10))
	require.NoError(t, err)
	tests := []struct {
		name    string
		change  func(c client.Client)
		wantErr string
	}{
		{"missing", func(c client.Client) {
			require.NoError(t, c.Delete(ctx, &payloadv1alpha1.ManifestChunk{ObjectMeta: objectMeta("set", chunks[1].Name())}))
		}, "write every chunk of the payload before the work or template that lists it"},
		{"damaged", func(c client.Client) {
			obj := &payloadv1alpha1.ManifestChunk{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "set", Name: chunks[1].Name()}, obj))
			obj.Spec.Encoding, obj.Spec.Data = payloadv1alpha1.EncodingIdentity, []byte("x")
			require.NoError(t, c.Update(ctx, obj))
		}, "delete it and write it again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
			_, err := Write(ctx, c, "set", chunks)
			require.NoError(t, err)
			tt.change(c)
			_, err = Copy(ctx, c, c, "set", "cluster1", &ref.Spec)
			require.ErrorContains(t, err, chunks[1].Name())
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// objectMeta names an object of namespace.
func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
