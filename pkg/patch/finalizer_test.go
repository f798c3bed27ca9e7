package patch

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestEnsureFinalizer(t *testing.T) {
	const fin = "test.kubectl-ocm.io/cleanup"
	refused := errors.New("connection refused")
	tests := []struct {
		name     string
		obj      *clusterv1.ManagedCluster
		deleted  bool  // the object is gone from the API server
		patchErr error // what the API server answers a patch
		// want* are EnsureFinalizer's answer, the patches sent, the
		// finalizers of obj afterwards and the reconcile's result through
		// RetryStale.
		wantChanged    bool
		wantPatches    int
		wantFinalizers []string
		wantResult     ctrl.Result
		wantErr        error
	}{
		{name: "missing: added", obj: newCluster().build(),
			wantChanged: true, wantPatches: 1, wantFinalizers: []string{fin}},
		{name: "present: nothing sent", obj: newCluster().finalizer(fin).build(),
			wantFinalizers: []string{fin}},
		{name: "other finalizers kept", obj: newCluster().finalizer("other").build(),
			wantChanged: true, wantPatches: 1, wantFinalizers: []string{"other", fin}},
		{name: "deleted since read: quiet requeue", obj: newCluster().build(), deleted: true,
			wantPatches: 1, wantResult: ctrl.Result{RequeueAfter: StaleRetry}},
		{name: "other error returned", obj: newCluster().build(), patchErr: refused,
			wantPatches: 1, wantErr: refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			patches := 0
			b := fake.NewClientBuilder().WithScheme(apis.Scheme).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
					patches++
					if tt.patchErr != nil {
						return tt.patchErr
					}
					return c.Patch(ctx, obj, p, opts...)
				},
			})
			if !tt.deleted {
				b = b.WithObjects(tt.obj.DeepCopy())
			}
			c := b.Build()
			obj := tt.obj.DeepCopy()
			if !tt.deleted {
				require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
			}
			before := obj.DeepCopy()

			changed, err := EnsureFinalizer(ctx, c, obj, fin)
			assert.Equal(t, tt.wantChanged, changed)
			assert.Equal(t, tt.wantPatches, patches, "patches sent")
			res, rerr := RetryStale(ctx, err, apierrors.IsNotFound)
			assert.Equal(t, tt.wantResult, res)
			assert.ErrorIs(t, rerr, tt.wantErr)
			if err != nil {
				assert.Equal(t, before, obj, "obj changed by a failed patch")
				return
			}
			assert.Equal(t, tt.wantFinalizers, obj.Finalizers)
			stored := &clusterv1.ManagedCluster{}
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(obj), stored))
			assert.True(t, slices.Equal(stored.Finalizers, obj.Finalizers), "stored %v, obj %v", stored.Finalizers, obj.Finalizers)
			assert.Equal(t, stored.ResourceVersion, obj.ResourceVersion, "obj holds the server's answer")
		})
	}
}
