// Package written remembers the objects a controller wrote until its
// informer cache shows them, so that a reconcile that runs before the cache
// catches up acts on the controller's own writes instead of on the older
// view: it neither creates again what it created (a failed create, then a
// read to tell its own work from someone else's) nor updates from a version
// it already replaced (a conflict). Kubernetes' controllers keep
// "expectations" for the same reason.
//
// A write is remembered with the resourceVersion of the object it replaced
// ("" for a create). While the cache still shows that version (or, for a
// create, nothing), the written object stands in for the cached one; as
// soon as the cache shows anything else, the cache is right and the write
// is forgotten. A write the cache never shows (the object was deleted by
// someone else before the cache saw it) is forgotten after TTL.
//
// Writes in a row (a create, then its status; an update, then its status)
// are one chain: the last object stands in while the cache shows the
// version the chain started from or any version the chain itself wrote.
package written

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTTL is how long a write the cache does not show is remembered when
// Writes.TTL is zero: far longer than a cache lags behind a healthy API
// server, short enough that an object deleted behind the controller's back
// is written again soon.
const DefaultTTL = 30 * time.Second

// Writes remembers writes by group (the object that owns them, for a
// controller that reconciles one owner at a time) and key. The zero value
// is ready to use; it is safe for concurrent use.
type Writes[T client.Object] struct {
	// TTL bounds how long a write is remembered; DefaultTTL when zero.
	TTL time.Duration
	// Now returns the current time; time.Now when nil.
	Now func() time.Time

	mu     sync.Mutex
	groups map[string]map[types.NamespacedName]write[T]
}

// write is one remembered write, or the last of a chain.
type write[T client.Object] struct {
	// from is the version the chain's first write replaced, "" for a
	// create; own are the versions its earlier writes made.
	from string
	own  []string
	obj  T
	at   time.Time
}

// behind reports whether a cache that shows version (seen false: nothing)
// has not caught up with wr yet.
func (wr write[T]) behind(seen bool, version string) bool {
	if version == wr.from && seen == (wr.from != "") {
		return true
	}
	return seen && slices.Contains(wr.own, version)
}

// Record remembers obj, just written by the controller over the version
// from of the object ("" when it created obj). A write over the object the
// group's last write of the same key made continues its chain. obj must
// not change after.
func (w *Writes[T]) Record(group, from string, obj T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.groups == nil {
		w.groups = map[string]map[types.NamespacedName]write[T]{}
	}
	g := w.groups[group]
	if g == nil {
		g = map[types.NamespacedName]write[T]{}
		w.groups[group] = g
	}
	if from != "" && obj.GetResourceVersion() == from {
		// A write that changed nothing (the API server kept the version):
		// the cache showing that version is up to date.
		return
	}
	key := client.ObjectKeyFromObject(obj)
	wr := write[T]{from: from, obj: obj, at: w.now()}
	if prev, ok := g[key]; ok && from != "" && prev.obj.GetResourceVersion() == from {
		wr.from, wr.own = prev.from, append(slices.Clone(prev.own), from)
	}
	g[key] = wr
}

// Forget drops the write of key in group, after the controller deleted
// the object.
func (w *Writes[T]) Forget(group string, key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if g := w.groups[group]; g != nil {
		delete(g, key)
		if len(g) == 0 {
			delete(w.groups, group)
		}
	}
}

// ForgetGroup drops every write of group, once its owner is gone.
func (w *Writes[T]) ForgetGroup(group string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.groups, group)
}

// Overlay brings a cached view of group up to date with its writes. cached
// returns the cached object of a key, or the zero T when the cache has none;
// set is called with each write the cache does not show yet. The writes the
// cache shows, or has moved past, and those older than TTL are forgotten.
func (w *Writes[T]) Overlay(group string, cached func(types.NamespacedName) T, set func(types.NamespacedName, T)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.groups[group]
	now := w.now()
	for key, wr := range g {
		got := cached(key)
		var version string
		seen := !isNil(got)
		if seen {
			version = got.GetResourceVersion()
		}
		if wr.behind(seen, version) && now.Sub(wr.at) < w.ttl() {
			set(key, wr.obj)
			continue
		}
		delete(g, key)
	}
	if len(g) == 0 {
		delete(w.groups, group)
	}
}

// Len returns how many writes are remembered, for tests and metrics.
func (w *Writes[T]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, g := range w.groups {
		n += len(g)
	}
	return n
}

func (w *Writes[T]) ttl() time.Duration {
	if w.TTL > 0 {
		return w.TTL
	}
	return DefaultTTL
}

func (w *Writes[T]) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// isNil reports whether obj, a pointer type in practice, is a nil pointer.
func isNil[T client.Object](obj T) bool {
	var zero T
	return any(obj) == any(zero)
}
