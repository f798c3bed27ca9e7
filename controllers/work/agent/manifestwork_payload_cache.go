package agent

import (
	"slices"
	"sync"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// payloadCache keeps, for each work with a large payload, what the first
// pass over its last generation staged whole learned: where its manifests
// lie among the chunks and their ranks in the apply order, a few bytes per
// manifest, so that a resync applies it again without that pass. The
// verified chunks themselves are in store, on disk, so that a new
// generation reads from the hub only the chunks it changed and a staging
// cut short goes on where it stopped. A nil cache keeps nothing.
type payloadCache struct {
	store *chunkStore

	mu    sync.Mutex
	works map[string]*stagedPayload
	// stagingChunks are the chunk names of each work's generation being
	// staged, and stagedChunks those of its last generation staged whole.
	stagingChunks, stagedChunks map[string][]string
}

// stagedPayload is a payload whose every chunk was present and verified.
type stagedPayload struct {
	// key is the digest of the chunk list.
	key   string
	index *payload.Index
	// ranks are the manifests' ranks in the apply order, by ordinal
	// (apply.SortManifests), and order the ranks present, lowest first.
	ranks []int32
	order []int32
}

// newStagedPayload returns the staged payload of key with ranks, by
// ordinal, and its index.
func newStagedPayload(key string, index *payload.Index, ranks []int32) *stagedPayload {
	order := slices.Compact(slices.Sorted(slices.Values(ranks)))
	return &stagedPayload{key: key, index: index, ranks: ranks, order: order}
}

// get returns the staged payload of work whose chunk list has digest key,
// or nil.
func (c *payloadCache) get(work, key string) *stagedPayload {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.works[work]; ok && p.key == key {
		return p
	}
	return nil
}

// staging records the chunks of the generation of work being staged, so
// that the store keeps them and those of its last generation staged whole.
func (c *payloadCache) staging(work string, spec *payloadv1alpha1.ManifestPayloadSpec) {
	if c == nil {
		return
	}
	names := make([]string, len(spec.Chunks))
	for i, ref := range spec.Chunks {
		names[i] = payload.ChunkName(ref.Digest)
	}
	c.mu.Lock()
	if c.stagingChunks == nil {
		c.stagingChunks = map[string][]string{}
	}
	c.stagingChunks[work] = names
	listed := append(slices.Clone(names), c.stagedChunks[work]...)
	c.mu.Unlock()
	c.store.list(work, listed)
}

// put records p, the generation of work just staged whole.
func (c *payloadCache) put(work string, p *stagedPayload) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.works == nil {
		c.works, c.stagedChunks = map[string]*stagedPayload{}, map[string][]string{}
	}
	c.works[work] = p
	c.stagedChunks[work] = c.stagingChunks[work]
}

// invalidate drops the staged payload of work, so that the next reconcile
// reads and verifies all of it again.
func (c *payloadCache) invalidate(work string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.works, work)
}

// forget drops what the cache keeps of work, its chunks on disk among it
// unless another work lists them.
func (c *payloadCache) forget(work string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.works, work)
	delete(c.stagingChunks, work)
	delete(c.stagedChunks, work)
	c.mu.Unlock()
	c.store.forget(work)
}

// chunkStore returns the store of the cache's chunks; nil keeps none.
func (c *payloadCache) chunkStore() *chunkStore {
	if c == nil {
		return nil
	}
	return c.store
}
