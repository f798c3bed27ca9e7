package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestNeedsAction(t *testing.T) {
	cluster := func(generation int64, accepted bool) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Generation: generation}}
		if accepted {
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue}}
		}
		return mc
	}
	tests := []struct {
		name          string
		before, after *clusterv1.ManagedCluster
		want          bool
	}{
		{"accepted", cluster(1, false), cluster(1, true), true},
		{"no longer accepted", cluster(1, true), cluster(1, false), true},
		{"spec changed, such as the lease duration", cluster(1, true), cluster(2, true), true},
		{"status written, such as by the agent itself", cluster(2, true), cluster(2, true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsAction(tt.before, tt.after); got != tt.want {
				t.Errorf("needsAction = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadCluster(t *testing.T) {
	ctx := t.Context()
	id := identity{cluster: "c1", agentID: "abcde"}
	onHub := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: clusterv1.ManagedClusterSpec{LeaseDurationSeconds: 30}}
	gets := 0
	hub := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(onHub).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	conn := &hubConnection{client: hub}
	a := &Agent{}

	mc, err := a.readCluster(ctx, conn, id)
	require.NoError(t, err)
	require.Equal(t, int32(30), mc.Spec.LeaseDurationSeconds)
	require.Equal(t, 1, gets, "without a watch the cluster is read from the hub")

	// The watch has delivered a newer spec than the hub client's fake
	// holds, so the two sources can be told apart.
	watched := onHub.DeepCopy()
	watched.Spec.LeaseDurationSeconds = 90
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &clusterv1.ManagedClusterList{Items: []clusterv1.ManagedCluster{*watched}}, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				// No streaming list here: the informer falls back to a list.
				return nil, apierrors.NewBadRequest("no watch-list")
			}
			return watch.NewFake(), nil
		},
	}, &clusterv1.ManagedCluster{}, 0, toolscache.Indexers{})
	go inf.RunWithContext(ctx)
	require.True(t, toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced))

	a.watch = &clusterWatch{id: id, informer: inf}
	mc, err = a.readCluster(ctx, conn, id)
	require.NoError(t, err)
	require.Equal(t, int32(90), mc.Spec.LeaseDurationSeconds, "read from the watch")
	require.Equal(t, 1, gets, "no request to the hub")
	mc.Spec.LeaseDurationSeconds = 5
	again, err := a.readCluster(ctx, conn, id)
	require.NoError(t, err)
	require.Equal(t, int32(90), again.Spec.LeaseDurationSeconds, "the caller gets a copy, the watch's object is untouched")

	// A watch of another identity (the cluster was renamed) is not used.
	a.watch = &clusterWatch{id: identity{cluster: "c2", agentID: "abcde"}, informer: inf}
	_, err = a.readCluster(ctx, conn, id)
	require.NoError(t, err)
	require.Equal(t, 2, gets)

	// A watch that does not hold the cluster (deleted on the hub) falls
	// back to the hub, whose answer, NotFound here, reaches the caller.
	a.watch = &clusterWatch{id: identity{cluster: "gone", agentID: "abcde"}, informer: inf}
	_, err = a.readCluster(ctx, conn, identity{cluster: "gone", agentID: "abcde"})
	require.True(t, apierrors.IsNotFound(err), "got %v", err)
	require.Equal(t, 3, gets)
}
