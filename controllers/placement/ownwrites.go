package placement

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// deletedMark stands for "deleted by the scheduler" in ownWrites.
const deletedMark = "<deleted>"

// maxOwnWrites bounds the writes remembered per PlacementDecision.
const maxOwnWrites = 8

// ownWrites remembers the resourceVersions of the PlacementDecisions the
// scheduler wrote itself, so that the watch events of its own writes do not
// schedule the placement again. Without it, every write would reschedule the
// placement once more with the Balance counts other placements changed in
// the meantime, and a thousand placements would keep moving each other's
// clusters around. Changes made by anyone else still reschedule.
type ownWrites struct {
	mu  sync.Mutex
	rvs map[types.NamespacedName]map[string]struct{}
}

// newOwnWrites returns an empty record.
func newOwnWrites() *ownWrites {
	return &ownWrites{rvs: map[types.NamespacedName]map[string]struct{}{}}
}

// record notes that the scheduler wrote key at resourceVersion rv (or
// deleted it, with rv deletedMark).
func (w *ownWrites) record(key types.NamespacedName, rv string) {
	if rv == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rvs[key]) >= maxOwnWrites {
		// Events of earlier writes were missed (a relist): start over.
		w.rvs[key] = nil
	}
	if w.rvs[key] == nil {
		w.rvs[key] = map[string]struct{}{}
	}
	w.rvs[key][rv] = struct{}{}
}

// consume reports whether the event of key at rv is one of the scheduler's
// own writes, forgetting it.
func (w *ownWrites) consume(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.rvs[key]
	if _, ok := set[rv]; !ok {
		return false
	}
	delete(set, rv)
	if len(set) == 0 {
		delete(w.rvs, key)
	}
	return true
}

// consumeDelete reports whether the deletion of key was the scheduler's own
// and forgets everything about key.
func (w *ownWrites) consumeDelete(key types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ours := w.rvs[key][deletedMark]
	delete(w.rvs, key)
	return ours
}
