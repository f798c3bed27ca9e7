package workpayload

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// configMaps returns n ConfigMaps of size bytes of data each.
func configMaps(n, size int) []workv1.Manifest {
	out := make([]workv1.Manifest, n)
	for i := range out {
		seed := fmt.Sprintf("cm-%02d-", i)
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%02d","namespace":"app"},"data":{"v":%q}}`,
			i, strings.Repeat(seed, size/len(seed)+1))
		out[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}
	}
	return out
}

func TestPack(t *testing.T) {
	tests := []struct {
		name      string
		manifests []workv1.Manifest
		large     bool
	}{
		{"within a ManifestWork's limit", configMaps(7, 64<<10), false},
		{"over it", configMaps(9, 64<<10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Pack("app", tt.manifests)
			require.NoError(t, err)
			if !tt.large {
				assert.Nil(t, p)
				return
			}
			require.NotNil(t, p)
			spec := &workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{p.Manifest}}}
			ref, err := payload.Of(spec)
			require.NoError(t, err)
			assert.Equal(t, p.Spec, ref.Spec)
			assert.Equal(t, int64(len(tt.manifests)), ref.Spec.Manifests)
			assert.Len(t, p.Chunks, len(ref.Spec.Chunks))
		})
	}
}

// TestWriteProgress writes a payload of 12 chunks to a namespace that has
// five of them: a line of progress per two chunks, and a count of the
// chunks written and kept.
func TestWriteProgress(t *testing.T) {
	ctx := context.Background()
	p, err := Pack("app", configMaps(12, 64<<10))
	require.NoError(t, err)
	require.Len(t, p.Chunks, 12, "a chunk per ConfigMap of 64 KiB")
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
	_, err = payload.Write(ctx, c, "cluster1", p.Chunks[:5])
	require.NoError(t, err)

	var progress bytes.Buffer
	w, err := p.Write(ctx, c, "cluster1", &progress)
	require.NoError(t, err)
	assert.Equal(t, int64(7), w.Chunks)
	assert.Equal(t, int64(5), w.Kept)
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	require.Len(t, lines, 6, progress.String())
	assert.Equal(t, "Writing the payload of app to namespace cluster1: 2 of 12 chunks (0.1 of 0.8 MiB)", lines[0])
	assert.Equal(t, "Writing the payload of app to namespace cluster1: 12 of 12 chunks (0.8 of 0.8 MiB)", lines[5])
	assert.Regexp(t, `^Payload of app: 7 chunks written to namespace cluster1 \(0\.4 MiB, 0\.\d MiB stored\), 5 already on the hub$`,
		p.Summary("cluster1", w))
}

// TestManifests reads the manifests of a work back from its payload's
// chunks, and names a chunk that is missing or fails its digest.
func TestManifests(t *testing.T) {
	ctx := context.Background()
	manifests := configMaps(9, 64<<10)
	p, err := Pack("app", manifests)
	require.NoError(t, err)
	spec := &workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{p.Manifest}}}
	tests := []struct {
		name    string
		change  func(t *testing.T, c client.Client)
		wantErr []string
	}{
		{"whole", func(*testing.T, client.Client) {}, nil},
		{"a chunk missing", func(t *testing.T, c client.Client) {
			obj := &payloadv1alpha1.ManifestChunk{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: p.Chunks[4].Name()}, obj))
			require.NoError(t, c.Delete(ctx, obj))
		}, []string{"its payload is not whole in namespace cluster1: 8 of 9 chunks", p.Chunks[4].Name(), "write the payload again"}},
		{"a chunk changed", func(t *testing.T, c client.Client) {
			obj := &payloadv1alpha1.ManifestChunk{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: p.Chunks[2].Name()}, obj))
			obj.Spec.Encoding, obj.Spec.Data = payloadv1alpha1.EncodingIdentity, []byte("x")
			require.NoError(t, c.Update(ctx, obj))
		}, []string{"its payload cannot be read", p.Chunks[2].Name(), "delete it and write it again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).Build()
			_, err := p.Write(ctx, c, "cluster1", &bytes.Buffer{})
			require.NoError(t, err)
			tt.change(t, c)
			got, err := Manifests(ctx, c, "cluster1", spec)
			if tt.wantErr != nil {
				for _, want := range tt.wantErr {
					require.ErrorContains(t, err, want)
				}
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(manifests))
			for i := range got {
				assert.JSONEq(t, string(manifests[i].Raw), string(got[i].Raw))
			}
		})
	}

	t.Run("ordinary manifests are the spec's", func(t *testing.T) {
		small := &workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests[:2]}}
		got, err := Manifests(ctx, fake.NewClientBuilder().WithScheme(apis.Scheme).Build(), "cluster1", small)
		require.NoError(t, err)
		assert.Equal(t, manifests[:2], got)
	})
}
