package lease

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// counting is a fake hub holding the leases of clusters, counting the
// requests made to it; failUpdate, when set, answers the next update.
type counting struct {
	client.Client
	// raw reads and writes without counting.
	raw           client.Client
	gets, updates int
	failUpdate    error
}

func newHub(t *testing.T, clusters ...string) *counting {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, coordinationv1.AddToScheme(scheme))
	var objs []client.Object
	for _, c := range clusters {
		objs = append(objs, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: clusterv1.LeaseName}})
	}
	h := &counting{raw: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()}
	h.Client = interceptor.NewClient(h.raw.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			h.gets++
			return c.Get(ctx, key, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			h.updates++
			if err := h.failUpdate; err != nil {
				h.failUpdate = nil
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	return h
}

func (h *counting) renewTime(t *testing.T, cluster string) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	require.NoError(t, h.raw.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, l))
	require.NotNil(t, l.Spec.RenewTime)
	return l.Spec.RenewTime.Time
}

func TestRenewReadsOnlyWhenItMust(t *testing.T) {
	ctx := context.Background()
	h := newHub(t, "c1", "c2")
	var r Renewer
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	require.NoError(t, r.Renew(ctx, h, "c1", t0))
	assert.Equal(t, [2]int{1, 1}, [2]int{h.gets, h.updates}, "first renewal: read and update")
	assert.True(t, h.renewTime(t, "c1").Equal(t0))

	for i := 1; i <= 3; i++ {
		require.NoError(t, r.Renew(ctx, h, "c1", t0.Add(time.Duration(i)*time.Minute)))
	}
	assert.Equal(t, [2]int{1, 4}, [2]int{h.gets, h.updates}, "later renewals: one update each, no read")
	assert.True(t, h.renewTime(t, "c1").Equal(t0.Add(3*time.Minute)))

	// Someone else writes the lease: the kept copy conflicts, the renewal
	// reads and updates at once and succeeds.
	other := &coordinationv1.Lease{}
	require.NoError(t, h.raw.Get(ctx, client.ObjectKey{Namespace: "c1", Name: clusterv1.LeaseName}, other))
	other.Labels = map[string]string{"edited": "yes"}
	require.NoError(t, h.raw.Update(ctx, other))
	h.gets, h.updates = 0, 0
	require.NoError(t, r.Renew(ctx, h, "c1", t0.Add(4*time.Minute)))
	assert.Equal(t, [2]int{1, 2}, [2]int{h.gets, h.updates}, "after a conflict: the failed update, a read, an update")
	assert.True(t, h.renewTime(t, "c1").Equal(t0.Add(4*time.Minute)))

	// Any other failure returns it and reads next time.
	h.gets, h.updates = 0, 0
	h.failUpdate = apierrors.NewServiceUnavailable("hub down")
	err := r.Renew(ctx, h, "c1", t0.Add(5*time.Minute))
	assert.True(t, apierrors.IsServiceUnavailable(err), "error %v", err)
	assert.ErrorContains(t, err, "renew the lease of c1")
	require.NoError(t, r.Renew(ctx, h, "c1", t0.Add(6*time.Minute)))
	assert.Equal(t, [2]int{1, 2}, [2]int{h.gets, h.updates}, "after a failure the next renewal reads")

	// A copy of c1's lease is never written as c2's.
	h.gets, h.updates = 0, 0
	require.NoError(t, r.Renew(ctx, h, "c2", t0))
	assert.Equal(t, [2]int{1, 1}, [2]int{h.gets, h.updates})
	assert.True(t, h.renewTime(t, "c2").Equal(t0))
	assert.True(t, h.renewTime(t, "c1").Equal(t0.Add(6*time.Minute)), "c1's lease untouched")
}

func TestRenewMissingLease(t *testing.T) {
	h := newHub(t)
	var r Renewer
	err := r.Renew(context.Background(), h, "c1", time.Now())
	assert.True(t, apierrors.IsNotFound(err), "error %v", err)
	assert.ErrorContains(t, err, "read the lease of c1")
	assert.Zero(t, h.updates)
}
