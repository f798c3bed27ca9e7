package agent

import (
	"context"
	"sync"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// payloadCache keeps, for each work with a large payload, the manifests of
// its last verified payload, so that a resync does not fetch its chunks
// again, and its verified chunks as the hub stores them (compressed), so
// that a new generation fetches only the chunks it changed and a staging
// cut short goes on where it stopped. A nil cache keeps nothing.
type payloadCache struct {
	mu    sync.Mutex
	works map[string]*cachedPayload
}

// cachedPayload is what the cache keeps of one work.
type cachedPayload struct {
	// key is the digest of the chunk list manifests were assembled from.
	key       string
	manifests []workv1.Manifest
	// chunks are the verified chunks by name: those of the last complete
	// generation and, while the next one is incomplete, what of it was
	// verified.
	chunks map[string]*payloadv1alpha1.ManifestChunk
}

// get returns the manifests of work's payload whose chunk list has digest
// key, or nil.
func (c *payloadCache) get(work, key string) []workv1.Manifest {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.works[work]; ok && p.key == key {
		return p.manifests
	}
	return nil
}

// put records the manifests of work's payload whose chunk list has digest
// key.
func (c *payloadCache) put(work, key string, manifests []workv1.Manifest) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(work)
	e.key, e.manifests = key, manifests
}

// getter returns a Getter that answers from work's verified chunks, and
// from hub for the others, and the map of every chunk it returned. The
// chunks it returns from the cache are checked again, as every chunk is.
func (c *payloadCache) getter(work string, hub payload.Getter) (payload.Getter, map[string]*payloadv1alpha1.ManifestChunk) {
	returned := map[string]*payloadv1alpha1.ManifestChunk{}
	var have map[string]*payloadv1alpha1.ManifestChunk
	if c != nil {
		c.mu.Lock()
		if p, ok := c.works[work]; ok {
			have = p.chunks
		}
		c.mu.Unlock()
	}
	return func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		if obj, ok := have[name]; ok {
			returned[name] = obj
			return obj, nil
		}
		obj, err := hub(ctx, name)
		if err == nil {
			returned[name] = obj
		}
		return obj, err
	}, returned
}

// staged records the verified chunks of work's current generation: they
// replace the cached ones when the generation is complete, and join them
// while it is not.
func (c *payloadCache) staged(work string, chunks map[string]*payloadv1alpha1.ManifestChunk, complete bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(work)
	if complete || e.chunks == nil {
		e.chunks = chunks
		return
	}
	merged := make(map[string]*payloadv1alpha1.ManifestChunk, len(e.chunks)+len(chunks))
	for name, obj := range e.chunks {
		merged[name] = obj
	}
	for name, obj := range chunks {
		merged[name] = obj
	}
	e.chunks = merged
}

// forget drops what the cache keeps of work.
func (c *payloadCache) forget(work string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.works, work)
}

// entry returns work's entry, made if missing; c.mu is held.
func (c *payloadCache) entry(work string) *cachedPayload {
	if c.works == nil {
		c.works = map[string]*cachedPayload{}
	}
	e, ok := c.works[work]
	if !ok {
		e = &cachedPayload{}
		c.works[work] = e
	}
	return e
}
