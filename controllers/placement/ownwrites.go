package placement

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// deletedMark stands for "deleted by the scheduler" in ownWrites.
const deletedMark = "<deleted>"

// maxOwnWrites bounds the writes remembered per PlacementDecision.
const maxOwnWrites = 8

// ownWrites remembers what the scheduler wrote to each PlacementDecision,
// so that the watch events of its own writes do not schedule the placement
// again. Without it, every write would reschedule the placement once more
// with the Balance counts other placements changed in the meantime, and a
// thousand placements would keep moving each other's clusters around.
// Changes made by anyone else still reschedule.
//
// A write is remembered by what it writes (fingerprint), before it is
// sent: its watch event may reach the informer before the write's response
// reaches the scheduler, so a resourceVersion, known only from the
// response, is remembered too late. At 300 placements a third of the
// scheduler's own creates and half of its status writes came back as
// someone else's. A foreign write that leaves exactly what the scheduler
// wrote changes nothing the scheduler would change.
type ownWrites struct {
	mu   sync.Mutex
	sent map[types.NamespacedName]map[string]struct{}
}

// newOwnWrites returns an empty record.
func newOwnWrites() *ownWrites {
	return &ownWrites{sent: map[types.NamespacedName]map[string]struct{}{}}
}

// expect notes that the scheduler is about to write mark to key: a
// fingerprint of the object it writes, or deletedMark for a delete.
func (w *ownWrites) expect(key types.NamespacedName, mark string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent[key]) >= maxOwnWrites {
		// Events of earlier writes were missed (a relist, a write that
		// failed or changed nothing): start over.
		w.sent[key] = nil
	}
	if w.sent[key] == nil {
		w.sent[key] = map[string]struct{}{}
	}
	w.sent[key][mark] = struct{}{}
}

// fingerprint is what the scheduler writes of d: its placement and group
// labels, its owners and its decisions.
func fingerprint(d *clusterv1beta1.PlacementDecision) string {
	var sb strings.Builder
	for _, k := range []string{clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel} {
		sb.WriteString(d.Labels[k])
		sb.WriteByte('|')
	}
	for _, o := range d.OwnerReferences {
		sb.WriteString(string(o.UID))
		sb.WriteByte(',')
	}
	sb.WriteByte('|')
	for _, c := range d.Status.Decisions {
		fmt.Fprintf(&sb, "%s/%s/%d,", c.ClusterName, c.Reason, c.Score)
	}
	return sb.String()
}

// consume reports whether the event of d is one of the scheduler's own
// writes, forgetting it.
func (w *ownWrites) consume(d *clusterv1beta1.PlacementDecision) bool {
	key := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	mark := fingerprint(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.sent[key]
	if _, ok := set[mark]; !ok {
		return false
	}
	delete(set, mark)
	if len(set) == 0 {
		delete(w.sent, key)
	}
	return true
}

// consumeDelete reports whether the deletion of key was the scheduler's own
// and forgets everything about key.
func (w *ownWrites) consumeDelete(key types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ours := w.sent[key][deletedMark]
	delete(w.sent, key)
	return ours
}
