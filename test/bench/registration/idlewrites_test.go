package registration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// clusterObjects are the hub objects a cluster's agent and the hub's
// controllers write for that cluster: its ManagedCluster (spec and status),
// and, in its namespace, its lease, events, add-ons and works.
var clusterObjects = []struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, true},
	{schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}, false},
	{schema.GroupVersionResource{Version: "v1", Resource: "events"}, true},
	{schema.GroupVersionResource{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Resource: "managedclusteraddons"}, true},
	{schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "manifestworks"}, true},
}

// idleWrites counts, for idle, the writes to cluster's objects on the hub
// (clusterObjects), by resource: every change seen by a watch started at the
// beginning. A write that changes nothing is not counted (the API server
// stores nothing and notifies no watcher).
func idleWrites(ctx context.Context, b *testing.B, f *benchkit.Fleet, cluster string, idle time.Duration) map[string]int {
	b.Helper()
	dyn, err := dynamic.NewForConfig(f.Hub.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, idle)
	defer cancel()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for _, o := range clusterObjects {
		ri := dynamic.ResourceInterface(dyn.Resource(o.gvr))
		opts := metav1.ListOptions{}
		if o.namespaced {
			ri = dyn.Resource(o.gvr).Namespace(cluster)
		} else {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", cluster).String()
		}
		list, err := ri.List(ctx, opts)
		if err != nil {
			b.Fatalf("list %s of %s: %v", o.gvr.Resource, cluster, err)
		}
		opts.ResourceVersion = list.GetResourceVersion()
		w, err := ri.Watch(ctx, opts)
		if err != nil {
			b.Fatalf("watch %s of %s: %v", o.gvr.Resource, cluster, err)
		}
		wg.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
						mu.Lock()
						counts[o.gvr.Resource]++
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	return counts
}

// perMinute formats n writes over d as a rate per minute.
func perMinute(n int, d time.Duration) float64 {
	return float64(n) / d.Minutes()
}

// describeWrites lists counts by resource as rates per minute over d.
func describeWrites(counts map[string]int, d time.Duration) string {
	var parts []string
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %.2f/min", r, perMinute(n, d)))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
