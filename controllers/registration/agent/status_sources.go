package agent

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// informerRetryInterval is the wait before asking a cache again for an
// informer it could not start (its kind not served yet).
const informerRetryInterval = time.Second

// lateSource asks for a status sync on every event of obj's informer in c,
// and once more when that informer has synced, without holding the status
// controller's start until then. A first join installs the agent's CRDs
// right before the agent, and the informers of kinds that new take most of a
// second to sync; a controller-runtime Kind source waits until every informer
// of its cache has synced, which would hold the first status sync, and so
// Joined, that long. The status sync reads ClusterClaims only once their
// informer has synced (see informerSynced).
func lateSource(c cache.Cache, obj client.Object) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			var inf cache.Informer
			err := wait.PollUntilContextCancel(ctx, informerRetryInterval, true, func(ctx context.Context) (bool, error) {
				var err error
				inf, err = c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
				if err != nil {
					ctrl.LoggerFrom(ctx).V(1).Info("Cannot watch yet; retrying", "type", fmt.Sprintf("%T", obj), "error", err.Error())
				}
				return err == nil, nil
			})
			if err != nil {
				return
			}
			enqueue := func() { q.Add(statusRequest) }
			_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { enqueue() },
				UpdateFunc: func(any, any) { enqueue() },
				DeleteFunc: func(any) { enqueue() },
			})
			if err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Cannot watch for status syncs", "type", fmt.Sprintf("%T", obj))
				return
			}
			if toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				enqueue()
			}
		}()
		return nil
	})
}

// informerSynced reports whether obj's informer in c has synced, without
// waiting for it.
func informerSynced(ctx context.Context, c cache.Cache, obj client.Object) bool {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	return err == nil && inf.HasSynced()
}
