// Package patch holds the write helpers every hub reconciler shares: status
// and spec patches sent only when something changed, with optimistic locking
// so that two reconcilers writing different conditions of one object never
// overwrite each other's work.
package patch

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Status patches the status subresource of obj from base when status(obj)
// differs from status(base). The patch carries base's resourceVersion, so a
// concurrent write makes it fail with a conflict and the reconciler retries on
// fresh data. It reports whether it sent a patch.
func Status[T client.Object](ctx context.Context, c client.Client, base, obj T, status func(T) any) (bool, error) {
	if equality.Semantic.DeepEqual(status(base), status(obj)) {
		return false, nil
	}
	p := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(ctx, obj, p); err != nil {
		return false, fmt.Errorf("patch status of %s: %w", obj.GetName(), err)
	}
	return true, nil
}

// Object patches obj (metadata and spec) from base when they differ, with
// optimistic locking. It reports whether it sent a patch.
func Object[T client.Object](ctx context.Context, c client.Client, base, obj T) (bool, error) {
	if equality.Semantic.DeepEqual(base, obj) {
		return false, nil
	}
	p := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	if err := c.Patch(ctx, obj, p); err != nil {
		return false, fmt.Errorf("patch %s: %w", obj.GetName(), err)
	}
	return true, nil
}
