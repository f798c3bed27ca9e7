package agent

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// objectKey names one object on the managed cluster.
type objectKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// resourceWatcher watches the objects the agent applied, so that a change
// on the managed cluster (a status update, an edit, a deletion) brings
// their ManifestWork back within moments: for status feedback, condition
// rules and drift. It runs one informer per resource (GVR) that some work
// applied, started when the first work uses the resource and stopped when
// the last one stops. Informers keep only object metadata and react only
// to objects owned by an AppliedManifestWork of this hub (plus the few
// objects of works that do not own them: ReadOnly and orphaned manifests).
type resourceWatcher struct {
	ctx     context.Context
	log     logr.Logger
	meta    metadata.Interface
	hubHash string
	// enqueue brings a ManifestWork (by name) back to the controller.
	enqueue func(work string)

	mu sync.Mutex
	// informers are the running informers by resource.
	informers map[schema.GroupVersionResource]runningInformer
	// uses are the resources each work applied, and unowned the objects
	// each work applied without owning them.
	uses    map[string]map[schema.GroupVersionResource]bool
	unowned map[string][]objectKey
	// unownedWorks indexes unowned: object → works.
	unownedWorks map[objectKey]map[string]bool
	// ownWrites are the resource versions the agent's own writes produced;
	// their events are not news.
	ownWrites map[objectKey]string
}

// newResourceWatcher returns a watcher that runs its informers until ctx ends.
func newResourceWatcher(ctx context.Context, log logr.Logger, meta metadata.Interface, hubHash string, enqueue func(string)) *resourceWatcher {
	return &resourceWatcher{
		ctx: ctx, log: log, meta: meta, hubHash: hubHash, enqueue: enqueue,
		informers:    map[schema.GroupVersionResource]runningInformer{},
		uses:         map[string]map[schema.GroupVersionResource]bool{},
		unowned:      map[string][]objectKey{},
		unownedWorks: map[objectKey]map[string]bool{},
		ownWrites:    map[objectKey]string{},
	}
}

// Track records what work applied this round (its results) and starts or
// stops informers accordingly. Writes the apply made are remembered, so
// that their events do not bring the work back again.
func (w *resourceWatcher) Track(work string, results []apply.Result) {
	if w == nil {
		return
	}
	gvrs := map[schema.GroupVersionResource]bool{}
	var unowned []objectKey
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range results {
		r := &results[i]
		if r.GVR.Resource == "" {
			continue
		}
		gvrs[r.GVR] = true
		key := objectKey{gvr: r.GVR, namespace: r.Meta.Namespace, name: r.Meta.Name}
		if r.Object != nil && r.Change != apply.ChangeNone {
			w.ownWrites[key] = r.Object.GetResourceVersion()
		}
		if r.Object == nil || r.Strategy == workv1.UpdateStrategyTypeReadOnly || !ownedByAppliedWork(r.Object, w.hubHash) {
			unowned = append(unowned, key)
		}
	}
	w.setUnowned(work, unowned)
	old := w.uses[work]
	if len(gvrs) == 0 {
		delete(w.uses, work)
	} else {
		w.uses[work] = gvrs
	}
	for gvr := range gvrs {
		if _, running := w.informers[gvr]; !running {
			w.start(gvr)
		}
	}
	for gvr := range old {
		if !gvrs[gvr] && !w.inUse(gvr) {
			w.stop(gvr)
		}
	}
}

// Forget drops a work that is gone (or cleaned up) and stops the informers
// only it used.
func (w *resourceWatcher) Forget(work string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setUnowned(work, nil)
	old := w.uses[work]
	delete(w.uses, work)
	for gvr := range old {
		if !w.inUse(gvr) {
			w.stop(gvr)
		}
	}
}

// runningInformer is one informer and how to stop it.
type runningInformer struct {
	informer toolscache.SharedIndexInformer
	cancel   context.CancelFunc
}

// HasSynced reports whether every running informer has listed its objects.
func (w *resourceWatcher) HasSynced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ri := range w.informers {
		if !ri.informer.HasSynced() {
			return false
		}
	}
	return true
}

// Watching returns how many informers run (for tests and logs).
func (w *resourceWatcher) Watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.informers)
}

// setUnowned replaces the unowned objects of work. Call with mu held.
func (w *resourceWatcher) setUnowned(work string, keys []objectKey) {
	for _, k := range w.unowned[work] {
		delete(w.unownedWorks[k], work)
		if len(w.unownedWorks[k]) == 0 {
			delete(w.unownedWorks, k)
		}
	}
	if len(keys) == 0 {
		delete(w.unowned, work)
		return
	}
	w.unowned[work] = keys
	for _, k := range keys {
		if w.unownedWorks[k] == nil {
			w.unownedWorks[k] = map[string]bool{}
		}
		w.unownedWorks[k][work] = true
	}
}

// inUse reports whether some work uses gvr. Call with mu held.
func (w *resourceWatcher) inUse(gvr schema.GroupVersionResource) bool {
	for _, gvrs := range w.uses {
		if gvrs[gvr] {
			return true
		}
	}
	return false
}

// start runs an informer for gvr. Call with mu held.
func (w *resourceWatcher) start(gvr schema.GroupVersionResource) {
	ctx, cancel := context.WithCancel(w.ctx)
	// The API server sends the objects' metadata only (PartialObjectMetadata),
	// so that watching large objects costs the agent no more than small ones.
	inf := metadatainformer.NewFilteredMetadataInformer(w.meta, gvr, metav1.NamespaceAll, 0, toolscache.Indexers{}, nil).Informer()
	w.informers[gvr] = runningInformer{informer: inf, cancel: cancel}
	// Only metadata matters: the events say which work to look at again.
	_ = inf.SetTransform(metadataOnly)
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				w.changed(gvr, obj, false)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			if o, n := asObject(oldObj), asObject(obj); o != nil && n != nil && o.GetResourceVersion() != n.GetResourceVersion() {
				w.changed(gvr, obj, false)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			w.changed(gvr, obj, true)
		},
	})
	w.log.V(2).Info("Watching applied resources", "resource", gvr.String())
	go inf.RunWithContext(ctx)
}

// stop stops the informer of gvr. Call with mu held.
func (w *resourceWatcher) stop(gvr schema.GroupVersionResource) {
	if ri, ok := w.informers[gvr]; ok {
		ri.cancel()
		delete(w.informers, gvr)
		w.log.V(2).Info("Stopped watching applied resources", "resource", gvr.String())
	}
	for k := range w.ownWrites {
		if k.gvr == gvr {
			delete(w.ownWrites, k)
		}
	}
}

// changed enqueues the works of a changed object: the ones whose
// AppliedManifestWork owns it and the ones that apply it without owning it.
// An event of the agent's own write is dropped; a deletion never is.
func (w *resourceWatcher) changed(gvr schema.GroupVersionResource, obj any, deleted bool) {
	o := asObject(obj)
	if o == nil {
		return
	}
	key := objectKey{gvr: gvr, namespace: o.GetNamespace(), name: o.GetName()}
	w.mu.Lock()
	rv, written := w.ownWrites[key]
	own := written && !deleted && rv == o.GetResourceVersion() && o.GetDeletionTimestamp() == nil
	delete(w.ownWrites, key)
	var works []string
	for work := range w.unownedWorks[key] {
		works = append(works, work)
	}
	w.mu.Unlock()
	if own {
		return
	}
	for _, ref := range o.GetOwnerReferences() {
		if isAppliedWorkRef(ref) {
			if name, ok := workv1.ParseAppliedManifestWorkName(w.hubHash, ref.Name); ok {
				works = append(works, name)
			}
		}
	}
	for _, work := range works {
		w.enqueue(work)
	}
}

// asObject returns obj's metadata, or nil.
func asObject(obj any) metav1.Object {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	return o
}

// isAppliedWorkRef reports whether ref points to an AppliedManifestWork.
func isAppliedWorkRef(ref metav1.OwnerReference) bool {
	return ref.Kind == "AppliedManifestWork" && ref.APIVersion == workv1.GroupVersion.String()
}

// ownedByAppliedWork reports whether obj is owned by an AppliedManifestWork
// of the hub hubHash.
func ownedByAppliedWork(obj metav1.Object, hubHash string) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if _, ok := workv1.ParseAppliedManifestWorkName(hubHash, ref.Name); ok && isAppliedWorkRef(ref) {
			return true
		}
	}
	return false
}

// metadataOnly is the informers' transform: it keeps an object's identity,
// owners, generation and resource version, and drops the rest (labels,
// annotations, managed fields).
func metadataOnly(obj any) (any, error) {
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		out := &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta}
		out.Namespace, out.Name, out.UID = o.Namespace, o.Name, o.UID
		out.ResourceVersion, out.Generation = o.ResourceVersion, o.Generation
		out.OwnerReferences, out.DeletionTimestamp = o.OwnerReferences, o.DeletionTimestamp
		return out, nil
	case *unstructured.Unstructured:
		return objectMeta(o), nil
	}
	return obj, nil
}

// objectMeta returns a copy of u's identity, owners, generation, resource
// version and deletion time, without the rest.
func objectMeta(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	out.SetGeneration(u.GetGeneration())
	out.SetOwnerReferences(u.GetOwnerReferences())
	out.SetDeletionTimestamp(u.GetDeletionTimestamp())
	return out
}

// Pacing of the reconciles that watch events bring: each work has a token
// bucket of watchBurst reconciles refilled at watchRate per second, so that
// occasional changes are reported at once while a work whose objects keep
// changing (a Deployment rolling out) is reconciled at most watchRate times
// a second and does not flood the hub with status patches. Events that
// arrive while the work waits in the queue or is being reconciled become
// one reconcile (the queue holds a work once).
const (
	watchRate  = 10
	watchBurst = 5
)

// pacer computes the delay of a work's next watch-triggered reconcile.
type pacer struct {
	limit    rate.Limit
	burst    int
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// newPacer returns a pacer with the given per-work rate and burst.
func newPacer(limit rate.Limit, burst int) *pacer {
	return &pacer{limit: limit, burst: burst, limiters: map[string]*rate.Limiter{}}
}

// delay returns how long to wait before reconciling work for an event now:
// 0 while the work's bucket holds a token.
func (p *pacer) delay(work string) time.Duration {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.limiters[work]
	if !ok {
		if len(p.limiters) > 4096 {
			// Forget the works whose buckets are full again.
			for k, v := range p.limiters {
				if v.TokensAt(now) >= float64(p.burst) {
					delete(p.limiters, k)
				}
			}
		}
		l = rate.NewLimiter(p.limit, p.burst)
		p.limiters[work] = l
	}
	return l.ReserveN(now, 1).DelayFrom(now)
}
