package placement

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// placementIndex holds, per namespace, what the event handlers need to know
// of every placement the scheduler schedules: its spec and its predicates
// compiled once per generation, so that a cluster event costs a few
// selector matches per placement instead of a cache List and a selector
// parse each.
//
// Reconcile itself feeds it, before it reads anything else: a reconcile
// records the spec it schedules, then lists the clusters. An event handler
// runs after the informer store holds the event's object, so either it sees
// the spec of a run that has yet to read the clusters (and that run will
// read the new cluster), or it sees that run's spec and enqueues by it.
// A placement not yet reconciled is not in the index, and needs no event:
// its first reconcile is queued already. Deleted, deleting and
// scheduling-disabled placements leave it.
type placementIndex struct {
	mu          sync.RWMutex
	byNamespace map[string]map[string]*indexEntry
}

// indexEntry is what the index knows of one placement. Entries are
// replaced, never changed, but for selectsNone.
type indexEntry struct {
	// placement carries the namespace, name, generation and a copy of the
	// spec of the placement (no status): the handlers' filters read it.
	placement *clusterv1beta1.Placement
	// filter is spec.predicates compiled.
	filter placement.PredicateFilter
	// selectsNone reports that the last scheduling run selected no cluster,
	// or that a run is under way. Such a placement's PlacementSatisfied
	// reason (AllManagedClusterSetsEmpty or NoManagedClusterMatched)
	// depends on whether its sets have members at all, so any cluster
	// joining or leaving its sets reschedules it.
	selectsNone bool
}

// newPlacementIndex returns an empty index.
func newPlacementIndex() *placementIndex {
	return &placementIndex{byNamespace: map[string]map[string]*indexEntry{}}
}

// observe records p as about to be scheduled: its spec, compiled when its
// generation is new to the index, and selectsNone until scheduled says
// otherwise (the run's result is not known yet). It returns p's compiled
// predicates.
func (x *placementIndex) observe(p *clusterv1beta1.Placement) placement.PredicateFilter {
	if x == nil {
		return placement.NewPredicateFilter(p.Spec.Predicates)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	ns := x.byNamespace[p.Namespace]
	if ns == nil {
		ns = map[string]*indexEntry{}
		x.byNamespace[p.Namespace] = ns
	}
	if e := ns[p.Name]; e != nil && e.placement.UID == p.UID && e.placement.Generation == p.Generation {
		e.selectsNone = true
		return e.filter
	}
	e := &indexEntry{
		placement: &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation},
			Spec:       *p.Spec.DeepCopy(),
		},
		filter:      placement.NewPredicateFilter(p.Spec.Predicates),
		selectsNone: true,
	}
	ns[p.Name] = e
	return e.filter
}

// scheduled records how many clusters the last run of key selected.
func (x *placementIndex) scheduled(key types.NamespacedName, selected int) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.byNamespace[key.Namespace][key.Name]; e != nil {
		e.selectsNone = selected == 0
	}
}

// forget removes key from the index.
func (x *placementIndex) forget(key types.NamespacedName) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	ns := x.byNamespace[key.Namespace]
	delete(ns, key.Name)
	if len(ns) == 0 {
		delete(x.byNamespace, key.Namespace)
	}
}

// indexView is what a handler's filter sees of one placement.
type indexView struct {
	placement   *clusterv1beta1.Placement
	filter      placement.PredicateFilter
	selectsNone bool
}

// each calls fn with every placement of namespace ns that may use one of
// sets: those without spec.clusterSets or naming one of them. fn must not
// call the index.
func (x *placementIndex) each(ns string, sets []string, fn func(indexView)) {
	if x == nil {
		return
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, e := range x.byNamespace[ns] {
		if cs := e.placement.Spec.ClusterSets; len(cs) > 0 && !slices.ContainsFunc(cs, func(s string) bool { return slices.Contains(sets, s) }) {
			continue
		}
		fn(indexView{placement: e.placement, filter: e.filter, selectsNone: e.selectsNone})
	}
}
