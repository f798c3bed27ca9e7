package main

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

const (
	// resyncPeriod is how often every ConfigMap is looked at again, mending
	// anything a missed event left behind.
	resyncPeriod = 10 * time.Minute
	// workers is how many ConfigMaps are synced at once.
	workers = 2
)

// controller runs a copier on informer events: a change to a ConfigMap of
// the cluster's namespace on the hub, or to one of the copies, syncs the
// ConfigMap of that name.
type controller struct {
	copier       *copier
	hubFactory   informers.SharedInformerFactory
	hubInformer  cache.SharedIndexInformer
	copyFactory  informers.SharedInformerFactory
	copyInformer cache.SharedIndexInformer
	queue        workqueue.TypedRateLimitingInterface[string]
}

// newController returns the controller copying the ConfigMaps of namespace
// hubNamespace on the hub into namespace on the managed cluster.
func newController(hub, managed kubernetes.Interface, hubNamespace, namespace string) *controller {
	hubFactory := informers.NewSharedInformerFactoryWithOptions(hub, resyncPeriod, informers.WithNamespace(hubNamespace))
	copyFactory := informers.NewSharedInformerFactoryWithOptions(managed, resyncPeriod, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sourceNamespaceLabel + "=" + hubNamespace }))
	sources := hubFactory.Core().V1().ConfigMaps()
	copies := copyFactory.Core().V1().ConfigMaps()
	return &controller{
		copier: &copier{
			sources: sources.Lister().ConfigMaps(hubNamespace), copies: copies.Lister().ConfigMaps(namespace),
			managed: managed, hubNamespace: hubNamespace, namespace: namespace,
		},
		hubFactory: hubFactory, hubInformer: sources.Informer(),
		copyFactory: copyFactory, copyInformer: copies.Informer(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "helloworld"}),
	}
}

// run watches both namespaces and syncs ConfigMaps until ctx ends. No copy is
// touched before both watches have listed everything, so a hub the agent may
// not read yet never looks like a hub without ConfigMaps.
func (c *controller) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	defer c.queue.ShutDown()
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}
	for _, inf := range []cache.SharedIndexInformer{c.hubInformer, c.copyInformer} {
		if _, err := inf.AddEventHandler(enqueue); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "add event handler") // only fails once started
		}
	}
	if err := c.hubInformer.SetWatchErrorHandlerWithContext(c.hubWatchError); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "set the hub watch error handler")
	}
	c.hubFactory.Start(ctx.Done())
	c.copyFactory.Start(ctx.Done())
	defer c.hubFactory.Shutdown()
	defer c.copyFactory.Shutdown()

	logger.Info("waiting to list the hub's ConfigMaps and the copies")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.hubInformer.HasSynced, c.copyInformer.HasSynced) {
		return
	}
	logger.Info("syncing ConfigMaps", "hubNamespace", c.copier.hubNamespace)
	for range workers {
		go wait.UntilWithContext(ctx, c.work, time.Second)
	}
	<-ctx.Done()
}

// hubWatchError explains a refused list or watch of the hub's ConfigMaps,
// the usual reason being that the add-on's hub permissions are not (yet)
// granted; the informer keeps retrying with back-off.
func (c *controller) hubWatchError(ctx context.Context, r *cache.Reflector, err error) {
	if apierrors.IsForbidden(err) {
		klog.FromContext(ctx).Error(err, "the hub refuses to let this agent read ConfigMaps in its cluster namespace; "+
			"the add-on's hub permissions grant that, to namespace --cluster-name only: check that --cluster-name names this cluster, "+
			"that the add-on is enabled on it and that its hubPermissions RoleBinding exists; retrying",
			"hubNamespace", c.copier.hubNamespace)
		return
	}
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

// enqueue queues the name of a ConfigMap event's object.
func (c *controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if _, name, err := cache.SplitMetaNamespaceKey(key); err == nil {
		c.queue.Add(name)
	}
}

// work syncs queued names until the queue shuts down.
func (c *controller) work(ctx context.Context) {
	for c.next(ctx) {
	}
}

// next syncs one queued name; it returns false once the queue shuts down.
func (c *controller) next(ctx context.Context) bool {
	name, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(name)
	logger := klog.FromContext(ctx).WithValues("configMap", name)
	action, err := c.copier.sync(ctx, name)
	switch {
	case err != nil:
		logger.Error(err, "sync ConfigMap; retrying")
		c.queue.AddRateLimited(name)
		return true
	case action == actionSkipped:
		logger.Info("a ConfigMap of this name exists in the install namespace and is not a copy; left alone")
	case action != actionUnchanged && action != actionIgnored:
		logger.Info("ConfigMap copy " + action)
	}
	c.queue.Forget(name)
	return true
}
