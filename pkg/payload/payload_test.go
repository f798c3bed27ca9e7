package payload

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// configMap is a ConfigMap manifest with size bytes of data, its content
// drawn from seed.
func configMap(name string, size int, seed string) workv1.Manifest {
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, "%s-%d;", seed, b.Len())
	}
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]string{"v": b.String()[:size]},
	})
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

// manifests returns n ConfigMaps of size bytes each.
func manifests(n, size int) []workv1.Manifest {
	out := make([]workv1.Manifest, n)
	for i := range out {
		out[i] = configMap(fmt.Sprintf("cm-%04d", i), size, fmt.Sprint(i))
	}
	return out
}

// store keeps chunks as a namespace of the hub would.
type store map[string]*payloadv1alpha1.ManifestChunk

func (s store) put(t *testing.T, chunks []Chunk) (written int64) {
	t.Helper()
	for _, c := range chunks {
		if _, ok := s[c.Name()]; ok {
			continue
		}
		obj, err := Object("c1", c)
		require.NoError(t, err)
		s[c.Name()] = obj
		written += c.Ref.Size
	}
	return written
}

func (s store) get(_ context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
	if obj, ok := s[name]; ok {
		return obj.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "work.kubectl-ocm.io", Resource: "manifestchunks"}, name)
}

func TestSplitLoadRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		manifests []workv1.Manifest
	}{
		{"one small manifest", manifests(1, 10)},
		{"many small manifests", manifests(2000, 300)},
		{"manifests larger than a chunk", append(manifests(3, 40<<10), configMap("big", 3<<20, "big"), configMap("after", 10, "x"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, chunks, err := Split("app", tt.manifests)
			require.NoError(t, err)
			require.NoError(t, Validate(&ref.Spec))
			assert.Equal(t, int64(len(tt.manifests)), ref.Spec.Manifests)
			for _, c := range chunks {
				assert.LessOrEqual(t, len(c.Data), payloadv1alpha1.MaxChunkSize)
			}
			s := store{}
			s.put(t, chunks)
			got, p, err := Load(context.Background(), &ref.Spec, s.get)
			require.NoError(t, err)
			require.True(t, p.Complete(), p.String())
			require.Len(t, got, len(tt.manifests))
			for i := range got {
				assert.JSONEq(t, string(tt.manifests[i].Raw), string(got[i].Raw))
			}
		})
	}
}

func TestSmallChangeRewritesLittle(t *testing.T) {
	// 20 MiB of ConfigMaps of 64 KiB; 1 % of them change.
	before := manifests(320, 64<<10)
	after := append([]workv1.Manifest(nil), before...)
	for i := 0; i < len(after); i += 100 {
		after[i+7] = configMap(fmt.Sprintf("cm-%04d", i+7), 64<<10, "changed")
	}
	// An insertion in the middle moves every later manifest.
	inserted := append(append(append([]workv1.Manifest(nil), before[:160]...), configMap("new", 64<<10, "new")), before[160:]...)

	for _, tt := range []struct {
		name     string
		next     []workv1.Manifest
		maxShare float64
	}{
		{"1 % of the manifests changed", after, 0.02},
		{"one manifest inserted", inserted, 0.01},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := store{}
			ref, chunks, err := Split("app", before)
			require.NoError(t, err)
			total := s.put(t, chunks)
			_, chunks, err = Split("app", tt.next)
			require.NoError(t, err)
			written := s.put(t, chunks)
			share := float64(written) / float64(total)
			t.Logf("payload %d bytes in %d chunks; the change wrote %d bytes (%.2f %%)", total, len(ref.Spec.Chunks), written, share*100)
			assert.Less(t, share, tt.maxShare)
		})
	}
}

func TestDecodeRefusesTamperedChunks(t *testing.T) {
	ref, chunks, err := Split("app", manifests(40, 1<<10))
	require.NoError(t, err)
	require.NotEmpty(t, chunks)
	good, err := Object("c1", chunks[0])
	require.NoError(t, err)
	other, err := Object("c1", Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: Digest([]byte("x\n")), Size: 2}, Data: []byte("x\n")})
	require.NoError(t, err)

	tests := []struct {
		name    string
		change  func(*payloadv1alpha1.ManifestChunk)
		wantErr string
	}{
		{"unchanged", func(*payloadv1alpha1.ManifestChunk) {}, ""},
		{"other content under the name", func(c *payloadv1alpha1.ManifestChunk) { c.Spec = other.Spec }, "holds 2 bytes"},
		{"same size, other bytes", func(c *payloadv1alpha1.ManifestChunk) {
			data := []byte(strings.Replace(string(chunks[0].Data), "cm-0000", "cm-9999", 1))
			c.Spec.Encoding, c.Spec.Data = payloadv1alpha1.EncodingIdentity, data
		}, "its content's digest is sha256:"},
		{"damaged gzip", func(c *payloadv1alpha1.ManifestChunk) { c.Spec.Data = c.Spec.Data[:10] }, "cannot be read"},
		{"not gzip", func(c *payloadv1alpha1.ManifestChunk) { c.Spec.Data = []byte("plain") }, "gzip data is damaged"},
		{"more data than promised", func(c *payloadv1alpha1.ManifestChunk) {
			c.Spec.Encoding, c.Spec.Data = payloadv1alpha1.EncodingIdentity, append(chunks[0].Data, 'x')
		}, "more than"},
		{"another name", func(c *payloadv1alpha1.ManifestChunk) { c.Name = other.Name }, "its name is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := good.DeepCopy()
			tt.change(obj)
			_, err := Decode(obj, ref.Spec.Chunks[0])
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var de *DigestError
			require.ErrorAs(t, err, &de)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "delete it and write it again")
		})
	}
}

func TestLoadWithMissingChunks(t *testing.T) {
	ref, chunks, err := Split("app", manifests(200, 8<<10))
	require.NoError(t, err)
	require.Greater(t, len(chunks), 3)
	s := store{}
	s.put(t, chunks)
	delete(s, chunks[1].Name())

	got, p, err := Load(context.Background(), &ref.Spec, s.get)
	require.NoError(t, err)
	assert.Nil(t, got)
	assert.False(t, p.Complete())
	assert.Equal(t, int64(len(chunks)-1), p.PresentChunks)
	assert.Equal(t, []string{chunks[1].Name()}, p.Missing)
	assert.Contains(t, p.String(), fmt.Sprintf("%d of %d chunks", len(chunks)-1, len(chunks)))

	// A tampered chunk after the missing one is still found.
	s[chunks[2].Name()].Spec.Data = []byte("x")
	_, _, err = Load(context.Background(), &ref.Spec, s.get)
	var de *DigestError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, chunks[2].Name(), de.Chunk)
}

func TestOf(t *testing.T) {
	ref, _, err := Split("app", manifests(3, 100))
	require.NoError(t, err)
	pm, err := Manifest(ref)
	require.NoError(t, err)
	bad := *ref
	bad.Spec.Chunks = append([]payloadv1alpha1.ChunkRef(nil), ref.Spec.Chunks...)
	bad.Spec.Chunks[0].Digest = "sha256:XYZ"
	badManifest, err := Manifest(&bad)
	require.NoError(t, err)
	wrongSize := *ref
	wrongSize.Spec.Size++
	wrongSizeManifest, err := Manifest(&wrongSize)
	require.NoError(t, err)

	tests := []struct {
		name      string
		manifests []workv1.Manifest
		want      bool
		wantErr   string
	}{
		{"ordinary manifests", manifests(2, 10), false, ""},
		{"a payload", []workv1.Manifest{pm}, true, ""},
		{"a payload beside other manifests", append(manifests(1, 10), pm), false, "must be the only manifest"},
		{"a bad digest", []workv1.Manifest{badManifest}, false, "is not sha256: followed by 64"},
		{"a size that is not the sum", []workv1.Manifest{wrongSizeManifest}, false, "is not the sum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: tt.manifests}}
			got, err := Of(spec)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got != nil)
			if tt.want {
				assert.Equal(t, ref.Spec, got.Spec)
			}
		})
	}
}
