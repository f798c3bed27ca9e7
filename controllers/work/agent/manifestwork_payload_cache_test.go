package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// hubChunks plays the hub's chunks of one namespace and counts reads.
type hubChunks struct {
	objs  map[string]*payloadv1alpha1.ManifestChunk
	reads int
}

func (h *hubChunks) get(_ context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
	h.reads++
	if obj, ok := h.objs[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "work.kubectl-ocm.io", Resource: "manifestchunks"}, name)
}

// generation splits 20 ConfigMaps of 64 KiB, those in changed holding
// other data, writes its chunks to h except those in skip, and returns its
// chunk list.
func (h *hubChunks) generation(t *testing.T, changed, skip map[int]bool) *payloadv1alpha1.ManifestPayloadSpec {
	t.Helper()
	manifests := make([]workv1.Manifest, 20)
	for i := range manifests {
		v := fmt.Sprintf("cm-%d", i)
		if changed[i] {
			v += "-changed"
		}
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"v":%q}}`, i, strings.Repeat(v, (64<<10)/len(v)))
		manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}
	}
	ref, chunks, err := payload.Split("p", manifests)
	require.NoError(t, err)
	require.Len(t, chunks, 20, "one chunk per ConfigMap")
	for i, c := range chunks {
		if skip[i] {
			continue
		}
		obj, err := payload.Object("cluster1", c)
		require.NoError(t, err)
		h.objs[c.Name()] = obj
	}
	return &ref.Spec
}

// stage runs the first pass over spec through the cache and its store, as
// the agent does, and returns the reads of the hub it took.
func stage(t *testing.T, c *payloadCache, h *hubChunks, spec *payloadv1alpha1.ManifestPayloadSpec) (reads int, complete bool) {
	t.Helper()
	before := h.reads
	c.staging("w", spec)
	staged, p, err := scanPayload(context.Background(), "key", spec, storedReader(c.store, h.get))
	require.NoError(t, err)
	if staged != nil {
		c.put("w", staged)
	}
	return h.reads - before, p.Complete()
}

// newStore opens a store in a directory of the test.
func newStore(t *testing.T, dir string, limit int64) *chunkStore {
	t.Helper()
	s, err := openChunkStore(dir, limit)
	require.NoError(t, err)
	return s
}

func TestPayloadCacheFetchesOnlyWhatChanged(t *testing.T) {
	h := &hubChunks{objs: map[string]*payloadv1alpha1.ManifestChunk{}}
	dir := t.TempDir()
	c := &payloadCache{store: newStore(t, dir, DefaultPayloadCacheSize)}

	reads, complete := stage(t, c, h, h.generation(t, nil, nil))
	assert.True(t, complete)
	assert.Equal(t, 20, reads, "the first generation reads every chunk")

	reads, complete = stage(t, c, h, h.generation(t, map[int]bool{5: true}, nil))
	assert.True(t, complete)
	assert.Equal(t, 1, reads, "a generation that changes one ConfigMap reads its chunk only")

	// A generation that changes two more, one of whose chunks is not on the
	// hub yet: the one present is kept, and the next pass reads the other
	// only.
	third := map[int]bool{5: true, 6: true, 7: true}
	spec := h.generation(t, third, map[int]bool{7: true})
	reads, complete = stage(t, c, h, spec)
	assert.False(t, complete)
	assert.Equal(t, 2, reads, "the two changed chunks are asked for")
	h.generation(t, third, nil)
	reads, complete = stage(t, c, h, spec)
	assert.True(t, complete)
	assert.Equal(t, 1, reads, "the pass after reads only what was missing")

	// An agent started again finds the chunks on disk.
	c = &payloadCache{store: newStore(t, dir, DefaultPayloadCacheSize)}
	reads, complete = stage(t, c, h, spec)
	assert.True(t, complete)
	assert.Equal(t, 0, reads, "a restarted agent reads its chunks from disk")
}

func TestChunkStoreTrustsNothingItReads(t *testing.T) {
	h := &hubChunks{objs: map[string]*payloadv1alpha1.ManifestChunk{}}
	spec := h.generation(t, nil, nil)
	dir := t.TempDir()
	c := &payloadCache{store: newStore(t, dir, DefaultPayloadCacheSize)}
	_, complete := stage(t, c, h, spec)
	require.True(t, complete)

	// One chunk changed on disk, another cut short, a third gone.
	name := func(i int) string { return payload.ChunkName(spec.Chunks[i].Digest) }
	require.NoError(t, os.WriteFile(filepath.Join(dir, name(0)+".gzip"), []byte("not gzip"), 0o600))
	raw, err := os.ReadFile(filepath.Join(dir, name(1)+".gzip"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name(1)+".gzip"), raw[:len(raw)/2], 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, name(2)+".gzip")))
	// A file being written when the agent stopped.
	require.NoError(t, os.WriteFile(filepath.Join(dir, storeTempPrefix+name(3)+"-1"), []byte("x"), 0o600))

	c = &payloadCache{store: newStore(t, dir, DefaultPayloadCacheSize)}
	assert.NoFileExists(t, filepath.Join(dir, storeTempPrefix+name(3)+"-1"), "a file cut short when the agent stopped is removed")
	for i := range 2 {
		data, err := c.store.read(spec.Chunks[i])
		assert.Nil(t, data)
		require.ErrorContains(t, err, "kept on disk removed")
		assert.NoFileExists(t, filepath.Join(dir, name(i)+".gzip"))
	}
	h.reads = 0
	reads, complete := stage(t, c, h, spec)
	assert.True(t, complete)
	assert.Equal(t, 3, reads, "the changed, the damaged and the missing chunks are read from the hub again")
	for i := range 3 {
		assert.FileExists(t, filepath.Join(dir, name(i)+".gzip"))
	}
}

func TestChunkStoreStaysWithinItsLimit(t *testing.T) {
	h := &hubChunks{objs: map[string]*payloadv1alpha1.ManifestChunk{}}
	first := h.generation(t, nil, nil)
	var size int64
	for _, obj := range h.objs {
		size += int64(len(obj.Spec.Data))
	}
	// Room for one generation and a half.
	c := &payloadCache{store: newStore(t, t.TempDir(), size*3/2)}
	_, complete := stage(t, c, h, first)
	require.True(t, complete)
	assert.Equal(t, size, c.store.size)

	// A second work lists every chunk but the first of generation 1.
	c.store.list("other", nil)
	for _, ref := range first.Chunks[1:] {
		c.store.lists["other"] = append(c.store.lists["other"], payload.ChunkName(ref.Digest))
	}
	// Work w moves to a generation that changes every ConfigMap: its old
	// chunks are listed as its last generation staged whole, so only what
	// fits is kept, and the store never goes over its limit.
	all := map[int]bool{}
	for i := range 20 {
		all[i] = true
	}
	second := h.generation(t, all, nil)
	c.stagedChunks["w"] = nil // w's first generation is no longer its own
	_, complete = stage(t, c, h, second)
	require.True(t, complete)
	assert.LessOrEqual(t, c.store.size, size*3/2)
	_, err := os.Stat(c.store.path(payload.ChunkName(first.Chunks[0].Digest), "gzip"))
	assert.True(t, os.IsNotExist(err), "the chunk no work lists is evicted")
	for _, ref := range first.Chunks[1:] {
		assert.FileExists(t, c.store.path(payload.ChunkName(ref.Digest), "gzip"), "a chunk another work lists is kept")
	}

	// Forgetting the other work frees its chunks.
	c.store.forget("other")
	for _, ref := range first.Chunks[1:] {
		_, err := os.Stat(c.store.path(payload.ChunkName(ref.Digest), "gzip"))
		assert.True(t, os.IsNotExist(err))
	}
}
