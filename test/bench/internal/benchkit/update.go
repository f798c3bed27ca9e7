package benchkit

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Update applies change to obj and writes it with c.Update. A benchmark
// writes objects a controller writes too (a ManagedCluster the hub
// reconciles, a Deployment whose status the component runner reports), so
// after a conflict it reads obj again and applies change to the fresh copy.
func Update(ctx context.Context, c client.Client, obj client.Object, change func()) error {
	return retryOnConflict(ctx, c, obj, change, func() error { return c.Update(ctx, obj) })
}

// UpdateStatus is Update for obj's status subresource.
func UpdateStatus(ctx context.Context, c client.Client, obj client.Object, change func()) error {
	return retryOnConflict(ctx, c, obj, change, func() error { return c.Status().Update(ctx, obj) })
}

// retryOnConflict applies change to obj and calls write, reading obj again
// before each retry after a conflict. The first attempt uses obj as given.
func retryOnConflict(ctx context.Context, c client.Client, obj client.Object, change func(), write func() error) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
		}
		first = false
		change()
		return write()
	})
	if err != nil {
		return fmt.Errorf("update %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
