package e2e

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// writes counts the writes to the objects of one resource on one cluster,
// per object name, from a list and then a watch that resumes from the last
// resourceVersion across API server and etcd restarts. A watch the API
// server can no longer resume is replaced by a new list, which counts one
// write for each object whose resourceVersion moved meanwhile.
type writes struct {
	ri       dynamic.ResourceInterface
	selector string
	field    []string

	mu      sync.Mutex
	rv      map[string]string
	created map[string]int
	updated map[string]int
	deleted map[string]int
	// values holds the successive values of field, per object name, and
	// times when the watch saw each.
	values map[string][]string
	times  map[string][]time.Time
	// deletedAt holds when the watch saw each object deleted.
	deletedAt map[string][]time.Time
}

// watchWrites starts counting the writes to resource gvr in namespace
// (empty: every namespace) on the cluster cfg reaches, for the objects that
// selector selects, until t ends. field, if given, is a path whose
// successive values are recorded.
func watchWrites(t *testing.T, cfg *rest.Config, gvr schema.GroupVersionResource, namespace, selector string, field ...string) *writes {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	w := &writes{
		ri: dc.Resource(gvr).Namespace(namespace), selector: selector, field: field,
		rv: map[string]string{}, created: map[string]int{}, updated: map[string]int{}, deleted: map[string]int{}, values: map[string][]string{}, times: map[string][]time.Time{},
		deletedAt: map[string][]time.Time{},
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	first := make(chan error, 1)
	go func() {
		defer close(done)
		w.run(ctx, first)
	}()
	require.NoError(t, <-first, "list %s on %s", gvr.Resource, cfg.Host)
	return w
}

// run lists and watches until ctx ends; the first list's outcome goes to
// first, and its objects are the baseline (not counted).
func (w *writes) run(ctx context.Context, first chan<- error) {
	selector := w.selector
	initial := true
	for ctx.Err() == nil {
		list, err := w.ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if initial {
			first <- err
			if err != nil {
				return
			}
		}
		if err != nil {
			// The API server is down: try again, as a client would.
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		w.relisted(list.Items, initial)
		initial = false
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return w.ri.Watch(ctx, o)
		}}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), lw)
		if err != nil {
			continue
		}
		for ev := range rw.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				w.event(ev.Type, u)
			}
		}
		rw.Stop()
		<-rw.Done()
	}
}

// relisted records the objects of a list, counting the changes since the
// last event seen unless baseline.
func (w *writes) relisted(items []unstructured.Unstructured, baseline bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for i := range items {
		u := &items[i]
		seen[u.GetName()] = true
		if baseline {
			w.rv[u.GetName()] = u.GetResourceVersion()
			w.record(u)
			continue
		}
		w.apply(watch.Modified, u)
	}
	for name := range w.rv {
		if !seen[name] {
			w.deleted[name]++
			w.deletedAt[name] = append(w.deletedAt[name], time.Now())
			delete(w.rv, name)
		}
	}
}

// event records one watch event.
func (w *writes) event(typ watch.EventType, u *unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.apply(typ, u)
}

// apply counts u as created, updated or deleted; w.mu is held.
func (w *writes) apply(typ watch.EventType, u *unstructured.Unstructured) {
	name := u.GetName()
	old, known := w.rv[name]
	switch {
	case typ == watch.Deleted:
		w.deleted[name]++
		w.deletedAt[name] = append(w.deletedAt[name], time.Now())
		delete(w.rv, name)
		return
	case !known:
		w.created[name]++
	case old != u.GetResourceVersion():
		w.updated[name]++
	default:
		return
	}
	w.rv[name] = u.GetResourceVersion()
	w.record(u)
}

// record appends u's field value when it differs from the last one; w.mu
// is held.
func (w *writes) record(u *unstructured.Unstructured) {
	if len(w.field) == 0 {
		return
	}
	v, _, _ := unstructured.NestedString(u.Object, w.field...)
	vs := w.values[u.GetName()]
	if len(vs) == 0 || vs[len(vs)-1] != v {
		w.values[u.GetName()] = append(vs, v)
		w.times[u.GetName()] = append(w.times[u.GetName()], time.Now())
	}
}

// writeCounts are the writes counted up to a moment, per object name.
type writeCounts struct {
	created, updated, deleted map[string]int
}

// counts returns the writes counted so far, once the watch has seen every
// object at the resourceVersion a fresh list returns.
func (w *writes) counts(t *testing.T) writeCounts {
	t.Helper()
	framework.Eventually(t.Context(), t, time.Minute, "the write counter to catch up with the API server", func(ctx context.Context) (bool, error) {
		list, err := w.ri.List(ctx, metav1.ListOptions{LabelSelector: w.selector})
		if err != nil {
			return false, err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, u := range list.Items {
			if w.rv[u.GetName()] != u.GetResourceVersion() {
				return false, nil
			}
		}
		return len(list.Items) == len(w.rv), nil
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return writeCounts{created: maps.Clone(w.created), updated: maps.Clone(w.updated), deleted: maps.Clone(w.deleted)}
}

// valuesOf returns the successive values of the recorded field of name.
func (w *writes) valuesOf(name string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.values[name]...)
}

// timesOf returns when the watch saw each of valuesOf(name).
func (w *writes) timesOf(name string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.times[name]...)
}

// deletionsOf returns when the watch saw name deleted.
func (w *writes) deletionsOf(name string) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.deletedAt[name]...)
}

// names returns the name of every object the watch has seen, deleted ones
// too.
func (w *writes) names() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for name := range w.values {
		seen[name] = true
	}
	for name := range w.deletedAt {
		seen[name] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// current returns the last value of the recorded field of every object
// that exists as far as the watch has seen, by name.
func (w *writes) current() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.rv))
	for name := range w.rv {
		if vs := w.values[name]; len(vs) > 0 {
			out[name] = vs[len(vs)-1]
		}
	}
	return out
}

// since returns the writes counted after before, per kind, as totals, and the
// names written after before.
func (c writeCounts) since(before writeCounts) (created, updated, deleted int, names []string) {
	var written []string
	diff := func(now, then map[string]int) int {
		n := 0
		for name, v := range now {
			if d := v - then[name]; d > 0 {
				n += d
				written = append(written, name)
			}
		}
		return n
	}
	created = diff(c.created, before.created)
	updated = diff(c.updated, before.updated)
	deleted = diff(c.deleted, before.deleted)
	return created, updated, deleted, written
}

// requestsByVerb returns the requests the API server at cfg has served since
// it started, per verb (LIST, WATCH, GET, CREATE, UPDATE, PATCH, APPLY, ...),
// from its metrics, and under "open WATCH" the watches open now.
func requestsByVerb(t *testing.T, cfg *rest.Config) map[string]int {
	t.Helper()
	var m framework.Metrics
	framework.Eventually(t.Context(), t, time.Minute, "the metrics of "+cfg.Host, func(ctx context.Context) (bool, error) {
		var err error
		m, err = framework.ScrapeAPIServer(ctx, cfg)
		return err == nil, err
	})
	out := map[string]int{}
	m.Each("apiserver_request_total", func(l map[string]string, v float64) { out[l["verb"]] += int(v) })
	m.Each("apiserver_longrunning_requests", func(l map[string]string, v float64) { out["open "+l["verb"]] += int(v) })
	return out
}

// components returns what runs of every Deployment on the hub and
// cluster1, keyed cluster/namespace/name.
func (fl *flow) components(t *testing.T) map[string]instance {
	t.Helper()
	out := map[string]instance{}
	for c, cl := range map[string]client.Client{"hub": fl.hubc, "cluster1": fl.c1c} {
		list := &appsv1.DeploymentList{}
		framework.Eventually(t.Context(), t, time.Minute, "the Deployments of "+c, func(ctx context.Context) (bool, error) {
			err := cl.List(ctx, list)
			return err == nil, err
		})
		for _, d := range list.Items {
			if in, ok := fl.running(t.Context(), c, d.Namespace, d.Name); ok {
				out[c+"/"+d.Namespace+"/"+d.Name] = in
			}
		}
	}
	return out
}

// conditionStatus returns the status of condition typ, "" when absent.
func conditionStatus(conds []metav1.Condition, typ string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Status
	}
	return ""
}

// listCounter counts the LIST requests the test's own clients send, per API
// server, so that they can be told apart from the components' in the
// servers' metrics.
type listCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// config returns cfg with its LIST requests counted.
func (lc *listCounter) config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if isList(r) {
				lc.mu.Lock()
				if lc.n == nil {
					lc.n = map[string]int{}
				}
				lc.n[r.URL.Host]++
				lc.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

// of returns the LIST requests counted so far to the API server at host
// (a rest.Config's Host).
func (lc *listCounter) of(host string) int {
	u, err := url.Parse(host)
	if err != nil {
		return 0
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.n[u.Host]
}

// isList reports whether r reads a collection: a GET, not a watch, of
// /api/v1/<resource> or /apis/<group>/<version>/<resource>, optionally under
// namespaces/<namespace>.
func isList(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Query().Get("watch") == "true" {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	return len(parts)%2 == 1
}
