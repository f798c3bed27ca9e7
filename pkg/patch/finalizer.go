package patch

import (
	"context"
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// EnsureFinalizer adds finalizer to obj on the API server through c when obj
// lacks it, and reports whether it added it. It patches a copy (Helper) and
// copies the server's answer into obj once the patch succeeded, so that obj
// is left as it was on an error and may be read by others meanwhile.
//
// The error rule is RetryStale's: a reconciler returns the error through
// RetryStale (with apierrors.IsNotFound for an object deleted since the
// cache saw it), so that a write based on a stale cache is a quiet requeue
// and any other error is returned.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string) (changed bool, err error) {
	if controllerutil.ContainsFinalizer(obj, finalizer) {
		return false, nil
	}
	h := NewHelper(obj, c)
	patched := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(patched, finalizer)
	if err := h.Patch(ctx, patched); err != nil {
		return false, fmt.Errorf("add finalizer %s: %w", finalizer, err)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(patched).Elem())
	return true, nil
}
