package clusterset

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// A label patch based on a cache behind another writer of the cluster is
// requeued quietly; any other failure is returned as an error; a patch that
// goes through labels the cluster with the default set.
func TestLabelReconcilerWrites(t *testing.T) {
	gr := clusterv1.GroupVersion.WithResource("managedclusters").GroupResource()
	for _, tt := range []struct {
		name     string
		patchErr error
		want     ctrl.Result
		wantErr  bool
		labeled  bool
	}{
		{name: "written", labeled: true},
		{name: "conflict", patchErr: apierrors.NewConflict(gr, "c1", errors.New("the object has been modified")), want: ctrl.Result{RequeueAfter: patch.StaleRetry}},
		{name: "deleted since read", patchErr: apierrors.NewNotFound(gr, "c1"), want: ctrl.Result{RequeueAfter: patch.StaleRetry}},
		{name: "denied", patchErr: apierrors.NewForbidden(gr, "c1", errors.New("no")), wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(mc).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
					if tt.patchErr != nil {
						return tt.patchErr
					}
					return c.Patch(ctx, obj, p, opts...)
				},
			}).Build()
			r := &LabelReconciler{Client: c}
			got, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "c1"}})
			if tt.wantErr {
				require.Error(t, err)
				assert.True(t, apierrors.IsForbidden(err), "the error is returned as it is: %v", err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
			after := &clusterv1.ManagedCluster{}
			require.NoError(t, c.Get(context.Background(), client.ObjectKey{Name: "c1"}, after))
			_, labeled := after.Labels[clusterv1beta2.ClusterSetLabel]
			assert.Equal(t, tt.labeled, labeled)
		})
	}
}
