package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

const (
	// runnerWorkers is how many Deployments of one cluster the Runner
	// reconciles at once; one slow process stop does not hold up the others.
	runnerWorkers = 4
	// runnerPollInterval is how often a Deployment with a process is looked at
	// again: volume contents, token expiry and process exits.
	runnerPollInterval = time.Second
	// runnerRetryInterval is the delay before retrying after an error.
	runnerRetryInterval = 2 * time.Second
)

// clusterRunner runs the selected Deployments of one cluster. Each Deployment
// key is handled by at most one worker at a time (the work queue guarantees
// it), so an instance's fields are only touched by that worker; mu guards the
// instances map and the published ProcessInfo snapshots.
type clusterRunner struct {
	r       *Runner
	cluster *framework.Cluster
	cache   cache.Cache
	client  client.Client
	queue   workqueue.TypedDelayingInterface[types.NamespacedName]

	ctx       context.Context
	workers   sync.WaitGroup
	cacheDone chan struct{}

	mu        sync.Mutex
	instances map[types.NamespacedName]*instance
	infos     map[types.NamespacedName]ProcessInfo
}

// newClusterRunner creates the cache (selected Deployments, all Secrets and
// ConfigMaps) and the status client for cluster c.
func newClusterRunner(r *Runner, c *framework.Cluster) (*clusterRunner, error) {
	cfg := c.RESTConfig()
	ca, err := cache.New(cfg, cache.Options{
		Scheme:   apis.Scheme,
		ByObject: map[client.Object]cache.ByObject{&appsv1.Deployment{}: {Label: r.selector}},
	})
	if err != nil {
		return nil, fmt.Errorf("create cache for cluster %s: %w", c.Name, err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create client for cluster %s: %w", c.Name, err)
	}
	return &clusterRunner{
		r: r, cluster: c, cache: ca, client: cl,
		queue:     workqueue.NewTypedDelayingQueue[types.NamespacedName](),
		cacheDone: make(chan struct{}),
		instances: map[types.NamespacedName]*instance{},
		infos:     map[types.NamespacedName]ProcessInfo{},
	}, nil
}

// start starts the cache with runCtx (the Runner's lifetime), waits within
// startCtx until it has synced, and starts the workers.
func (c *clusterRunner) start(runCtx, startCtx context.Context) error {
	c.ctx = runCtx
	go func() {
		defer close(c.cacheDone)
		if err := c.cache.Start(runCtx); err != nil {
			c.r.logf("%s: cache stopped: %v", c.cluster.Name, err)
		}
	}()
	syncCtx, cancel := context.WithCancel(startCtx)
	defer cancel()
	go func() { // GetInformer blocks until synced; give up when the Runner stops
		select {
		case <-runCtx.Done():
			cancel()
		case <-syncCtx.Done():
		}
	}()
	for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
		if _, err := c.cache.GetInformer(syncCtx, obj); err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
	}
	inf, err := c.cache.GetInformer(syncCtx, &appsv1.Deployment{})
	if err != nil {
		return fmt.Errorf("watch Deployments: %w", err)
	}
	enqueue := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if o, ok := obj.(client.Object); ok {
			c.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return fmt.Errorf("watch Deployments: %w", err)
	}
	if !c.cache.WaitForCacheSync(syncCtx) {
		return fmt.Errorf("cache did not sync: %w", syncCtx.Err())
	}
	for range runnerWorkers {
		c.workers.Go(c.work)
	}
	return nil
}

// work processes Deployment keys until the queue shuts down.
func (c *clusterRunner) work() {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		after, err := c.reconcile(c.ctx, key)
		c.queue.Done(key)
		if err != nil && c.ctx.Err() == nil {
			c.r.logf("%s/%s: %v", c.cluster.Name, key, err)
			after = max(after, runnerRetryInterval)
		}
		if after > 0 {
			c.queue.AddAfter(key, after)
		}
	}
}

// stop shuts down the queue and the cache (the Runner canceled c.ctx), waits
// for the workers, then stops every process in parallel.
func (c *clusterRunner) stop() error {
	c.queue.ShutDown()
	c.workers.Wait()
	if c.ctx != nil {
		<-c.cacheDone
	}
	c.mu.Lock()
	insts := make([]*instance, 0, len(c.instances))
	for _, inst := range c.instances {
		insts = append(insts, inst)
	}
	c.mu.Unlock()
	errs := make([]error, len(insts))
	var wg sync.WaitGroup
	for i, inst := range insts {
		wg.Go(func() { errs[i] = c.terminate(inst, "component runner stopping") })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// reconcile brings the process of one Deployment in line with the Deployment
// and writes its status. It returns when to look at the Deployment again.
func (c *clusterRunner) reconcile(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	dep := &appsv1.Deployment{}
	if err := c.cache.Get(ctx, key, dep); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, c.forget(key)
		}
		return 0, fmt.Errorf("get Deployment: %w", err)
	}
	inst := c.instanceFor(key)
	defer c.publish(inst)
	if (dep.Spec.Replicas != nil && *dep.Spec.Replicas == 0) || dep.DeletionTimestamp != nil {
		err := c.terminate(inst, "scaled to 0 or being deleted")
		if inst.hash != "" {
			inst.resetPod("")
		}
		return 0, errors.Join(err, c.patchStatus(ctx, dep, inst.observe(false)))
	}
	if hash := podTemplateHash(&dep.Spec.Template); hash != inst.hash {
		var err error
		if inst.hash != "" {
			err = c.terminate(inst, "pod template changed")
		}
		inst.resetPod(hash)
		if err != nil {
			return 0, err
		}
	}
	now := time.Now()
	if msg := inst.reap(now); msg != "" {
		c.r.logf("%s/%s: %s", c.cluster.Name, key, msg)
	}
	after := runnerPollInterval
	switch {
	case inst.proc != nil:
		c.refresh(ctx, dep, inst, now)
	case now.Before(inst.notBefore):
		after = inst.notBefore.Sub(now)
	default:
		c.launch(ctx, dep, inst, now)
		if inst.blocked != nil && !inst.blocked.retry {
			after = 0 // only a change to the Deployment can help
		}
	}
	return after, c.patchStatus(ctx, dep, inst.observe(true))
}

// instanceFor returns the instance for key, creating it on first use.
func (c *clusterRunner) instanceFor(key types.NamespacedName) *instance {
	c.mu.Lock()
	defer c.mu.Unlock()
	inst, ok := c.instances[key]
	if !ok {
		inst = newInstance(c.r.opts.Dir, c.cluster.Name, key)
		c.instances[key] = inst
	}
	return inst
}

// forget stops the process of a deleted Deployment and drops its instance.
func (c *clusterRunner) forget(key types.NamespacedName) error {
	c.mu.Lock()
	inst, ok := c.instances[key]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.terminate(inst, "Deployment deleted")
	c.mu.Lock()
	delete(c.instances, key)
	delete(c.infos, key)
	c.mu.Unlock()
	return err
}

// publish records a snapshot of inst for Runner.Process.
func (c *clusterRunner) publish(inst *instance) {
	info := ProcessInfo{Binary: inst.binary, Args: inst.args, Restarts: inst.restarts, LogPath: inst.logPath, Dir: inst.dir}
	if inst.proc != nil {
		info.Pid = inst.proc.Pid()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.instances[inst.key]; ok {
		c.infos[inst.key] = info
	}
}

// processInfo returns the last published snapshot for namespace/name.
func (c *clusterRunner) processInfo(namespace, name string) (ProcessInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.infos[types.NamespacedName{Namespace: namespace, Name: name}]
	return info, ok
}

// watchExit requeues key when p exits, so that the exit shows in the status
// and the process restarts after its back-off.
func (c *clusterRunner) watchExit(key types.NamespacedName, p *process.Process) {
	go func() {
		select {
		case <-p.Done():
			c.queue.Add(key)
		case <-c.ctx.Done():
		}
	}()
}
