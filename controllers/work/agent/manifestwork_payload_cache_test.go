package agent

import (
	"context"
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

// stage loads spec through the cache as the agent does and returns the
// reads of the hub it took.
func stage(t *testing.T, c *payloadCache, h *hubChunks, spec *payloadv1alpha1.ManifestPayloadSpec) (reads int, complete bool) {
	t.Helper()
	before := h.reads
	get, staged := c.getter("w", h.get)
	_, p, err := payload.Load(context.Background(), spec, get)
	require.NoError(t, err)
	c.staged("w", staged, p.Complete())
	return h.reads - before, p.Complete()
}

func TestPayloadCacheFetchesOnlyWhatChanged(t *testing.T) {
	h := &hubChunks{objs: map[string]*payloadv1alpha1.ManifestChunk{}}
	c := &payloadCache{}

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
}
