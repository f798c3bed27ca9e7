package placement

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// decisionAggregate counts, per cluster, how many PlacementDecisions of
// every placement on the hub name it, and which placements they belong to.
// It is fed by the PlacementDecision informer, so that the Balance
// prioritizer's input costs one map copy per scheduling run instead of a
// walk over every decision of the hub, and a cluster event finds the
// placements that decide the cluster without a walk either.
type decisionAggregate struct {
	mu sync.RWMutex
	// counts is the number of decisions naming each cluster.
	counts map[string]int
	// byDecision remembers what each PlacementDecision contributed.
	byDecision map[types.NamespacedName]decisionEntry
	// byPlacement lists the PlacementDecisions of each placement.
	byPlacement map[types.NamespacedName]map[types.NamespacedName]struct{}
	// byCluster counts, per cluster, the PlacementDecisions of each
	// placement that name it.
	byCluster map[string]map[types.NamespacedName]int
}

// decisionEntry is the contribution of one PlacementDecision.
type decisionEntry struct {
	placement types.NamespacedName
	clusters  []string
}

// newDecisionAggregate returns an empty aggregate.
func newDecisionAggregate() *decisionAggregate {
	return &decisionAggregate{
		counts:      map[string]int{},
		byDecision:  map[types.NamespacedName]decisionEntry{},
		byPlacement: map[types.NamespacedName]map[types.NamespacedName]struct{}{},
		byCluster:   map[string]map[types.NamespacedName]int{},
	}
}

// set records the current content of d, replacing what it contributed before.
func (a *decisionAggregate) set(d *clusterv1beta1.PlacementDecision) {
	key := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	entry := decisionEntry{placement: types.NamespacedName{Namespace: d.Namespace, Name: d.Labels[clusterv1beta1.PlacementLabel]}}
	for _, dec := range d.Status.Decisions {
		if dec.ClusterName != "" {
			entry.clusters = append(entry.clusters, dec.ClusterName)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeLocked(key)
	a.byDecision[key] = entry
	for _, c := range entry.clusters {
		a.counts[c]++
		if a.byCluster[c] == nil {
			a.byCluster[c] = map[types.NamespacedName]int{}
		}
		a.byCluster[c][entry.placement]++
	}
	if a.byPlacement[entry.placement] == nil {
		a.byPlacement[entry.placement] = map[types.NamespacedName]struct{}{}
	}
	a.byPlacement[entry.placement][key] = struct{}{}
}

// remove forgets the PlacementDecision key.
func (a *decisionAggregate) remove(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeLocked(key)
}

// removeLocked forgets key; a.mu must be held for writing.
func (a *decisionAggregate) removeLocked(key types.NamespacedName) {
	old, ok := a.byDecision[key]
	if !ok {
		return
	}
	delete(a.byDecision, key)
	for _, c := range old.clusters {
		if a.counts[c]--; a.counts[c] <= 0 {
			delete(a.counts, c)
		}
		if by := a.byCluster[c]; by != nil {
			if by[old.placement]--; by[old.placement] <= 0 {
				delete(by, old.placement)
			}
			if len(by) == 0 {
				delete(a.byCluster, c)
			}
		}
	}
	if set := a.byPlacement[old.placement]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(a.byPlacement, old.placement)
		}
	}
}

// others returns, per cluster, how many decisions of placements other than
// placement name it.
func (a *decisionAggregate) others(placement types.NamespacedName) map[string]int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make(map[string]int, len(a.counts))
	for c, n := range a.counts {
		out[c] = n
	}
	for key := range a.byPlacement[placement] {
		for _, c := range a.byDecision[key].clusters {
			if out[c]--; out[c] <= 0 {
				delete(out, c)
			}
		}
	}
	return out
}

// deciders returns the placements whose PlacementDecisions name cluster.
func (a *decisionAggregate) deciders(cluster string) map[types.NamespacedName]struct{} {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make(map[types.NamespacedName]struct{}, len(a.byCluster[cluster]))
	for p := range a.byCluster[cluster] {
		out[p] = struct{}{}
	}
	return out
}

// handler returns the informer event handler that keeps a up to date.
func (a *decisionAggregate) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if d, ok := obj.(*clusterv1beta1.PlacementDecision); ok {
				a.set(d)
			}
		},
		UpdateFunc: func(_, obj any) {
			if d, ok := obj.(*clusterv1beta1.PlacementDecision); ok {
				a.set(d)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(*clusterv1beta1.PlacementDecision); ok {
				a.remove(types.NamespacedName{Namespace: d.Namespace, Name: d.Name})
			}
		},
	}
}
