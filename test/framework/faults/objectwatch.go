package faults

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// ObjectWatch records, from watches of a cluster, every deletion and every
// re-creation (the same name with a new UID) of the objects of some
// resources: what a test of a disruption (a hub failover) asserts never
// happened to the workloads applied there.
type ObjectWatch struct {
	mu        sync.Mutex
	uids      map[string]types.UID
	deleted   []string
	recreated []string
}

// WatchObjects watches the objects of resources in namespace ("" for
// cluster-scoped resources or all namespaces) on c until tb ends. It returns
// once the watches have listed what exists.
func WatchObjects(tb testing.TB, c *framework.Cluster, namespace string, resources ...schema.GroupVersionResource) *ObjectWatch {
	tb.Helper()
	mc, err := metadata.NewForConfig(c.RESTConfig())
	if err != nil {
		tb.Fatal(err)
	}
	w := &ObjectWatch{uids: map[string]types.UID{}}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	var synced []toolscache.InformerSynced
	for _, gvr := range resources {
		inf := metadatainformer.NewFilteredMetadataInformer(mc, gvr, namespace, 0, toolscache.Indexers{}, nil).Informer()
		key := func(obj any) (string, types.UID, bool) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return "", "", false
			}
			return gvr.Resource + "/" + m.Namespace + "/" + m.Name, m.UID, true
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if k, uid, ok := key(obj); ok {
					w.seen(k, uid)
				}
			},
			UpdateFunc: func(_, obj any) {
				if k, uid, ok := key(obj); ok {
					w.seen(k, uid)
				}
			},
			DeleteFunc: func(obj any) {
				if k, _, ok := key(obj); ok {
					w.mu.Lock()
					w.deleted = append(w.deleted, k)
					w.mu.Unlock()
				}
			},
		}); err != nil {
			tb.Fatal(err)
		}
		go inf.RunWithContext(ctx)
		synced = append(synced, inf.HasSynced)
	}
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !toolscache.WaitForCacheSync(syncCtx.Done(), synced...) {
		tb.Fatalf("watch of %v on cluster %s did not sync", resources, c.Name)
	}
	return w
}

// seen records the UID of the object named k, noting a re-creation when it
// had another one before.
func (w *ObjectWatch) seen(k string, uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.uids[k]; ok && old != uid {
		w.recreated = append(w.recreated, k)
	}
	w.uids[k] = uid
}

// Objects returns the objects seen, as resource/namespace/name, sorted.
func (w *ObjectWatch) Objects() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.uids))
	for k := range w.uids {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Deleted returns the objects seen deleted, in order, as
// resource/namespace/name.
func (w *ObjectWatch) Deleted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.deleted)
}

// Recreated returns the objects seen with a new UID, in order.
func (w *ObjectWatch) Recreated() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.recreated)
}
