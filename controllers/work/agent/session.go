package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubsession"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// workControllerName names the ManifestWork controller (logs, metrics).
const workControllerName = "manifestwork-agent"

// runSession connects to the hub with cred and runs the ManifestWork
// controller until ctx ends or the connection cannot be set up.
func (a *Agent) runSession(ctx context.Context, cred *hubsession.Credential) error {
	hubHash := kubeconfig.HubHash(cred.Config.Host)
	log := ctrl.LoggerFrom(ctx).WithValues("hubHash", hubHash)
	ctx = ctrl.LoggerInto(ctx, log)
	cfg := rest.CopyConfig(cred.Config)
	cfg.QPS, cfg.Burst = a.opts.HubQPS, a.opts.HubBurst
	cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " work-agent"
	hub, err := hubsession.NewCluster(cfg, cred.ClusterName, log)
	if err != nil {
		return err
	}
	r := &workReconciler{
		setChunks:     &hubtunnel.ChunkClient{Host: cfg.Host, Client: hub.GetHTTPClient()},
		hub:           hub.GetClient(),
		hubReader:     hub.GetAPIReader(),
		payloads:      &a.payloads,
		spoke:         a.spoke,
		spokeReader:   a.spokeReader,
		applier:       a.applier,
		cluster:       cred.ClusterName,
		agentID:       cred.AgentID,
		hubHash:       hubHash,
		resync:        a.opts.ResyncInterval,
		statusSync:    a.opts.StatusSyncInterval,
		failures:      workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](failureBaseDelay, failureMaxDelay),
		rules:         a.rules,
		records:       a.records,
		executor:      a.executor,
		executorRetry: a.opts.ExecutorRetryInterval,
		drifts:        newDriftDetector(),
	}
	broadcaster, err := hubEventBroadcaster(ctx, cfg, cred.ClusterName)
	if err != nil {
		return err
	}
	defer broadcaster.Shutdown()
	r.recorder = broadcaster.NewRecorder(apis.Scheme, corev1.EventSource{Component: "work-agent", Host: cred.ClusterName})
	c, err := hubsession.NewController(workControllerName, r, a.opts.Workers, log, "manifestWork")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.watch(ctx, c, hub.GetCache(), r); err != nil {
		return err
	}
	if err := watchChunks(c, hub, r.hub, cred.ClusterName); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Go(func() { errs <- hub.Start(ctx) })
	wg.Go(func() { errs <- c.Start(ctx) })
	wg.Go(func() {
		// Eviction needs the hub's full list of works.
		if err := a.connectEviction(ctx, hub.GetCache(), &hubView{works: hub.GetClient(), cluster: cred.ClusterName,
			hubHash: hubHash, agentID: cred.AgentID}); err != nil {
			errs <- err
		}
	})
	err = <-errs
	cancel()
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

// hubEventBroadcaster returns a broadcaster of Events to the hub, in the
// cluster namespace where the agent may create them: drift is recorded as
// Events on the ManifestWorks. The caller shuts it down.
func hubEventBroadcaster(ctx context.Context, cfg *rest.Config, cluster string) (record.EventBroadcaster, error) {
	hubKube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create hub clientset: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: hubKube.CoreV1().Events(cluster)})
	return broadcaster, nil
}

// watch feeds c from the ManifestWorks of the hub cache, the
// AppliedManifestWork events and, through r's watcher started here until
// ctx ends, the objects the works applied.
func (a *Agent) watch(ctx context.Context, c controller.Controller, hubCache cache.Cache, r *workReconciler) error {
	if err := c.Watch(source.Kind(hubCache, &workv1.ManifestWork{},
		&handler.TypedEnqueueRequestForObject[*workv1.ManifestWork]{}, workChanged())); err != nil {
		return fmt.Errorf("watch ManifestWorks: %w", err)
	}
	if err := c.Watch(source.Channel(a.appliedEvents, handler.EnqueueRequestsFromMapFunc(
		func(_ context.Context, obj client.Object) []reconcile.Request {
			name, ok := workv1.ParseAppliedManifestWorkName(r.hubHash, obj.GetName())
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.cluster, Name: name}}}
		}))); err != nil {
		return fmt.Errorf("watch AppliedManifestWorks: %w", err)
	}
	// The applied objects are watched for this session's works: their
	// changes bring the work back through the controller's queue.
	var queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
	pace := newPacer(watchRate, watchBurst)
	r.watcher = newResourceWatcher(ctx, ctrl.LoggerFrom(ctx).WithName("watcher"), a.meta, r.hubHash, func(work string) {
		if q := queue.Load(); q != nil {
			(*q).AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.cluster, Name: work}}, pace.delay(work))
		}
	})
	if err := c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		queue.Store(&q)
		return nil
	})); err != nil {
		return fmt.Errorf("watch applied resources: %w", err)
	}
	return nil
}

// connectEviction waits for the session's ManifestWork cache to sync, then
// lets the AppliedManifestWork controller evict records of works gone from
// the hub until ctx ends.
func (a *Agent) connectEviction(ctx context.Context, hubCache cache.Cache, view *hubView) error {
	if !hubCache.WaitForCacheSync(ctx) {
		return nil
	}
	works, err := hubCache.GetInformer(ctx, &workv1.ManifestWork{})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("ManifestWork informer: %w", err)
	}
	disconnect, err := a.connectHub(ctx, view, works)
	if err != nil {
		return err
	}
	<-ctx.Done()
	disconnect()
	return nil
}

// workChanged lets through the ManifestWork events the agent acts on: every
// create and delete, and updates of the spec (generation), labels,
// annotations, finalizers or deletion. The agent's own status writes do not
// wake it up.
func workChanged() predicate.TypedPredicate[*workv1.ManifestWork] {
	return predicate.TypedFuncs[*workv1.ManifestWork]{
		UpdateFunc: func(e event.TypedUpdateEvent[*workv1.ManifestWork]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return o.Generation != n.Generation ||
				!n.DeletionTimestamp.Equal(o.DeletionTimestamp) ||
				!slices.Equal(o.Finalizers, n.Finalizers) ||
				!maps.Equal(o.Labels, n.Labels) ||
				!maps.Equal(o.Annotations, n.Annotations)
		},
	}
}
