package patch

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// StaleRetry is how soon a reconcile whose write met a cache behind the API
// server runs again.
const StaleRetry = 100 * time.Millisecond

// RetryStale is the result of a reconcile whose write, err, was based on a
// cached object: when err says the cache was behind the API server (a
// conflict, or any of the stale conditions given, e.g.
// apierrors.IsNotFound for an object deleted since), a quiet requeue after
// StaleRetry, logged at V(2), the next reconcile deciding again on what the
// cache then holds; any other err (nil included) is returned as it is.
func RetryStale(ctx context.Context, err error, stale ...func(error) bool) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	isStale := apierrors.IsConflict(err)
	for _, f := range stale {
		isStale = isStale || f(err)
	}
	if !isStale {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Cache behind the API server, retrying", "error", err.Error())
	return ctrl.Result{RequeueAfter: StaleRetry}, nil
}
