package propagation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func work(generation, appliedGeneration int64, status metav1.ConditionStatus) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "w", Generation: generation}}
	if appliedGeneration > 0 {
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: status, ObservedGeneration: appliedGeneration}}
	}
	return w
}

// observed returns the histogram's sample count and sum.
func observed(t *testing.T, h prometheus.Histogram) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	require.NoError(t, h.Write(m))
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func TestTracker(t *testing.T) {
	reg := prometheus.NewRegistry()
	tr, err := NewTracker(reg)
	require.NoError(t, err)
	now := time.Unix(1000, 0)
	tr.Now = func() time.Time { return now }

	// A work listed at start is not measured, even once applied.
	tr.Added(work(1, 0, ""), true)
	tr.Updated(work(1, 0, ""), work(1, 1, metav1.ConditionTrue))
	n, _ := observed(t, tr.Histogram())
	assert.Zero(t, n)

	// A new work: measured from when it was seen to Applied True.
	tr.Added(work(1, 0, ""), false)
	now = now.Add(1500 * time.Millisecond)
	tr.Updated(work(1, 0, ""), work(1, 1, metav1.ConditionFalse))
	n, _ = observed(t, tr.Histogram())
	assert.Zero(t, n, "Applied False is not applied")
	now = now.Add(500 * time.Millisecond)
	tr.Updated(work(1, 1, metav1.ConditionFalse), work(1, 1, metav1.ConditionTrue))
	n, sum := observed(t, tr.Histogram())
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 2.0, sum, 1e-9)

	// A new generation: the old Applied does not count, the new one does;
	// a generation superseded before it is applied is not measured.
	tr.Updated(work(1, 1, metav1.ConditionTrue), work(2, 1, metav1.ConditionTrue))
	now = now.Add(time.Second)
	tr.Updated(work(2, 1, metav1.ConditionTrue), work(3, 1, metav1.ConditionTrue))
	now = now.Add(250 * time.Millisecond)
	tr.Updated(work(3, 1, metav1.ConditionTrue), work(3, 3, metav1.ConditionTrue))
	n, sum = observed(t, tr.Histogram())
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 2.25, sum, 1e-9)

	// A deleted work is forgotten; the pending gauge follows.
	tr.Updated(work(3, 3, metav1.ConditionTrue), work(4, 3, metav1.ConditionTrue))
	gauge := func() float64 {
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() == PendingName {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", PendingName)
		return 0
	}
	assert.Equal(t, 1.0, gauge())
	tr.Deleted("c1", "w")
	assert.Equal(t, 0.0, gauge())
}

// unsyncedCache fails GetInformer as an informer cache does when it stops
// before the informer synced.
type unsyncedCache struct{ cache.Cache }

func (unsyncedCache) GetInformer(ctx context.Context, _ client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	<-ctx.Done()
	return nil, errors.New("timeout: failed waiting for *v1.ManifestWork Informer to sync")
}

func TestRunnableStoppedBeforeCacheSyncIsNoFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &Runnable{Cache: unsyncedCache{}}
	assert.NoError(t, r.Start(ctx))
	assert.False(t, r.Synced())
}
