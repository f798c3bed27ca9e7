package apply

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// minResetInterval bounds how often a miss re-reads discovery, so that a
// manifest of a kind that never exists cannot make every reconcile
// re-discover the whole API.
const minResetInterval = 250 * time.Millisecond

// Mapper maps kinds to resources from the managed cluster's discovery
// information. On a miss it re-reads discovery (at most every
// minResetInterval) and tries again, so that a CustomResourceDefinition
// applied a moment earlier, by this ManifestWork or another, is found.
type Mapper struct {
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// static replaces discovery in unit tests.
	static meta.RESTMapper

	mu        sync.Mutex
	lastReset time.Time
}

// NewMapper returns a Mapper over the discovery client dc.
func NewMapper(dc discovery.DiscoveryInterface) *Mapper {
	return &Mapper{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// RESTMapping returns the mapping of gvk, refreshing discovery on a miss.
func (m *Mapper) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m.static != nil {
		return m.static.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil || !meta.IsNoMatchError(err) {
		return mapping, err
	}
	// Look again even when another worker refreshed discovery a moment ago:
	// its refresh may already know the kind.
	m.reset()
	return m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// reset invalidates the discovery cache unless that happened very recently.
func (m *Mapper) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.lastReset) < minResetInterval {
		return
	}
	m.lastReset = time.Now()
	m.mapper.Reset()
}
