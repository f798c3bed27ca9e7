package agent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// appliedWorkBuilder builds AppliedManifestWorks for the eviction tests.
type appliedWorkBuilder struct{ amw *workv1.AppliedManifestWork }

func newAppliedWork(hubHash, agentID, work string) appliedWorkBuilder {
	return appliedWorkBuilder{&workv1.AppliedManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: workv1.AppliedManifestWorkName(hubHash, work), UID: "amw-uid",
			Finalizers: []string{workv1.AppliedManifestWorkFinalizer}},
		Spec: workv1.AppliedManifestWorkSpec{HubHash: hubHash, AgentID: agentID, ManifestWorkName: work},
	}}
}

func (b appliedWorkBuilder) evictingSince(t time.Time) appliedWorkBuilder {
	b.amw.Status.EvictionStartTime = &metav1.Time{Time: t}
	return b
}

func TestReconcileEviction(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	grace := 10 * time.Minute
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "w1"}}
	tests := []struct {
		name        string
		amw         appliedWorkBuilder
		workExists  bool
		noHub       bool
		grace       time.Duration
		wantStart   *time.Time // nil: cleared or never set
		wantDeleted bool
		wantRequeue time.Duration
	}{
		{name: "work present: nothing", amw: newAppliedWork("hub1", "a1", "w1"), workExists: true},
		{name: "work gone: eviction starts", amw: newAppliedWork("hub1", "a1", "w1"), wantStart: &now, wantRequeue: grace},
		{name: "work back: eviction canceled", amw: newAppliedWork("hub1", "a1", "w1").evictingSince(now.Add(-time.Minute)), workExists: true},
		{name: "within the grace period: waits", amw: newAppliedWork("hub1", "a1", "w1").evictingSince(now.Add(-4 * time.Minute)),
			wantStart: ptr.To(now.Add(-4 * time.Minute)), wantRequeue: 6 * time.Minute},
		{name: "grace period over: deleted", amw: newAppliedWork("hub1", "a1", "w1").evictingSince(now.Add(-grace)), wantDeleted: true},
		{name: "other hub, same agent: evicted even with a same-named work", amw: newAppliedWork("hub0", "a1", "w1"), workExists: true,
			wantStart: &now, wantRequeue: grace},
		{name: "other hub, other agent: not ours", amw: newAppliedWork("hub0", "a9", "w1")},
		{name: "no hub connected: nothing", amw: newAppliedWork("hub1", "a1", "w1"), noHub: true},
		{name: "100 years disables eviction", amw: newAppliedWork("hub1", "a1", "w1"), grace: evictionDisabledAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			amw := tt.amw.amw
			hubObjs := []client.Object{}
			if tt.workExists {
				hubObjs = append(hubObjs, work.DeepCopy())
			}
			hubC := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(hubObjs...).Build()
			spoke := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(amw.DeepCopy()).
				WithStatusSubresource(&workv1.AppliedManifestWork{}).Build()
			var view atomic.Pointer[hubView]
			if !tt.noHub {
				view.Store(&hubView{works: hubC, cluster: "cluster1", hubHash: "hub1", agentID: "a1"})
			}
			r := &appliedWorkReconciler{client: spoke, hub: &view, grace: grace, now: func() time.Time { return now }, notify: func(string) {}}
			if tt.grace > 0 {
				r.grace = tt.grace
			}
			res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: amw.Name}})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("requeue after %v, want %v", res.RequeueAfter, tt.wantRequeue)
			}
			got := &workv1.AppliedManifestWork{}
			err = spoke.Get(ctx, types.NamespacedName{Name: amw.Name}, got)
			if tt.wantDeleted {
				// The finalizer keeps the record until the objects are gone.
				if err == nil && got.DeletionTimestamp.IsZero() {
					t.Error("the AppliedManifestWork was not deleted")
				}
				return
			}
			if apierrors.IsNotFound(err) || !got.DeletionTimestamp.IsZero() {
				t.Fatal("the AppliedManifestWork was deleted")
			}
			if err != nil {
				t.Fatal(err)
			}
			start := got.Status.EvictionStartTime
			switch {
			case tt.wantStart == nil && start != nil:
				t.Errorf("evictionStartTime = %v, want none", start)
			case tt.wantStart != nil && (start == nil || !start.Time.Equal(*tt.wantStart)):
				t.Errorf("evictionStartTime = %v, want %v", start, *tt.wantStart)
			}
		})
	}
}
