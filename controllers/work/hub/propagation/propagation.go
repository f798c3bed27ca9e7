package propagation

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Metric names.
const (
	// HistogramName is the propagation time's histogram.
	HistogramName = "ocm_manifestwork_propagation_seconds"
	// PendingName is the gauge of changes not applied yet.
	PendingName = "ocm_manifestwork_propagation_pending"
)

// Buckets are the histogram's upper bounds, in seconds.
var Buckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900}

// Tracker follows the changes of ManifestWorks until they are applied.
type Tracker struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	histogram prometheus.Histogram
	mu        sync.Mutex
	pending   map[types.NamespacedName]change
}

// change is a generation of a work not applied yet, and when it was seen.
type change struct {
	generation int64
	seen       time.Time
}

// NewTracker returns a tracker whose histogram is registered with reg
// (nil: not registered), as is a gauge of the pending changes.
func NewTracker(reg prometheus.Registerer) (*Tracker, error) {
	t := &Tracker{
		pending: map[types.NamespacedName]change{},
		histogram: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    HistogramName,
			Help:    "Seconds from a ManifestWork's change (a new work or a new generation), as the hub saw it, to its Applied condition True for that generation.",
			Buckets: Buckets,
		}),
	}
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: PendingName,
		Help: "ManifestWork changes the hub has seen and their clusters have not applied yet.",
	}, func() float64 {
		t.mu.Lock()
		defer t.mu.Unlock()
		return float64(len(t.pending))
	})
	if reg != nil {
		for _, c := range []prometheus.Collector{t.histogram, pending} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register the propagation metrics: %w", err)
			}
		}
	}
	return t, nil
}

// Histogram returns the histogram, for tests.
func (t *Tracker) Histogram() prometheus.Histogram { return t.histogram }

func (t *Tracker) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Added handles a work the cache adds: one listed at start is not a change
// seen, one created later is.
func (t *Tracker) Added(w *workv1.ManifestWork, initial bool) {
	if initial {
		return
	}
	t.Updated(nil, w)
}

// Updated handles a work's new version; old is nil for a new work.
func (t *Tracker) Updated(old, w *workv1.ManifestWork) {
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if old == nil || old.Generation != w.Generation {
		if applied(w, w.Generation) {
			// The cache saw the change only once it was applied (its
			// events were coalesced): the wait is not known.
			delete(t.pending, key)
			return
		}
		t.pending[key] = change{generation: w.Generation, seen: now}
		return
	}
	c, ok := t.pending[key]
	if !ok || !applied(w, c.generation) {
		return
	}
	delete(t.pending, key)
	t.histogram.Observe(now.Sub(c.seen).Seconds())
}

// Deleted forgets a deleted work.
func (t *Tracker) Deleted(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, types.NamespacedName{Namespace: namespace, Name: name})
}

// applied reports whether w's Applied condition is True for generation (or
// a later one).
func applied(w *workv1.ManifestWork, generation int64) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == "True" && c.ObservedGeneration >= generation
}

// Runnable feeds the tracker from the manager's cache of ManifestWorks,
// which the hub controller keeps anyway. It runs in the elected replica.
type Runnable struct {
	Cache   cache.Cache
	Tracker *Tracker

	synced atomic.Bool
}

// Synced reports whether the handlers have seen every work listed at start:
// a work created after that is measured.
func (r *Runnable) Synced() bool { return r.synced.Load() }

// NeedLeaderElection: only the elected replica records.
func (r *Runnable) NeedLeaderElection() bool { return true }

// Start adds the tracker's handlers to the cache's ManifestWork informer and
// waits for ctx to end.
func (r *Runnable) Start(ctx context.Context) error {
	informer, err := r.Cache.GetInformer(ctx, &workv1.ManifestWork{})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before the cache synced
		}
		return fmt.Errorf("watch ManifestWorks for their propagation time: %w", err)
	}
	registration, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if w, ok := obj.(*workv1.ManifestWork); ok {
				r.Tracker.Added(w, initial)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*workv1.ManifestWork)
			w, ok2 := newObj.(*workv1.ManifestWork)
			if ok1 && ok2 {
				r.Tracker.Updated(old, w)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if w, ok := obj.(*workv1.ManifestWork); ok {
				r.Tracker.Deleted(w.Namespace, w.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch ManifestWorks for their propagation time: %w", err)
	}
	if toolscache.WaitForCacheSync(ctx.Done(), registration.HasSynced) {
		r.synced.Store(true)
	}
	<-ctx.Done()
	_ = informer.RemoveEventHandler(registration)
	return nil
}

// SetupWithManager registers the tracker's metrics with controller-runtime's
// registry and feeds it from mgr's cache.
func SetupWithManager(mgr ctrl.Manager) (*Tracker, error) {
	t, err := NewTracker(metrics.Registry)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(&Runnable{Cache: mgr.GetCache(), Tracker: t}); err != nil {
		return nil, fmt.Errorf("add the ManifestWork propagation tracker: %w", err)
	}
	return t, nil
}
