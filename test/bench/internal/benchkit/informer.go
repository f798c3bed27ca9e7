package benchkit

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListWatch lists and watches the objects of list's kind through c, with
// opts (such as client.InNamespace), for an informer.
func ListWatch(c client.WithWatch, list client.ObjectList, opts ...client.ListOption) *cache.ListWatch {
	with := func(raw *metav1.ListOptions) []client.ListOption {
		return append(append([]client.ListOption(nil), opts...), &client.ListOptions{Raw: raw})
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			return l, c.List(ctx, l, with(&raw)...)
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), with(&raw)...)
		},
	}
}

// RunInformer runs an informer of lw, whose objects are of obj's type, in
// loops until ctx ends, calling handle with every object added or updated,
// and returns its HasSynced.
func RunInformer(ctx context.Context, loops *sync.WaitGroup, lw cache.ListerWatcher, obj runtime.Object, handle func(any)) cache.InformerSynced {
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    obj,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    handle,
			UpdateFunc: func(_, o any) { handle(o) },
		},
	})
	loops.Go(func() { informer.RunWithContext(ctx) })
	return informer.HasSynced
}
