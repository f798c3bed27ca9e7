package sigdecision

import (
	"context"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
)

// key is the PlacementDecision every reconcile test works on.
var key = client.ObjectKey{Namespace: "ns", Name: "web-decision-1"}

// reconcile runs one reconcile of key against objs and returns the client,
// the recorder and how many writes the reconcile sent.
func reconcile(t *testing.T, objs ...client.Object) (client.Client, *events.FakeRecorder, int) {
	t.Helper()
	writes := 0
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).
		WithStatusSubresource(&clusterv1beta1.PlacementDecision{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				writes++
				return c.Create(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				writes++
				return c.Patch(ctx, obj, p, opts...)
			},
		}).Build()
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Recorder: rec}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return c, rec, writes
}

// mirrorOf returns the multicluster.x-k8s.io PlacementDecision key, nil when
// it does not exist.
func mirrorOf(t *testing.T, c client.Client) *multiclusterv1alpha1.PlacementDecision {
	t.Helper()
	pd := &multiclusterv1alpha1.PlacementDecision{}
	if err := c.Get(context.Background(), key, pd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatalf("get the mirror: %v", err)
	}
	return pd
}

func TestReconcile(t *testing.T) {
	src := newSource(key.Namespace, key.Name, "web", "c1", "c2").obj()
	stale := Mirror(newSource(key.Namespace, key.Name, "web", "c1").obj())
	stale.Labels["team"] = "a"
	foreign := &multiclusterv1alpha1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{multiclusterv1alpha1.LabelClusterManagerKey: "other"}},
		Decisions:  []multiclusterv1alpha1.ClusterDecision{{ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "theirs"}}},
	}
	tests := []struct {
		name       string
		objs       []client.Object
		wantWrites int
		// want checks the mirror after the reconcile.
		want func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision)
		// wantEvent is a substring of the one event recorded, "" for none.
		wantEvent string
	}{{
		name:       "a decision gets its mirror",
		objs:       []client.Object{src},
		wantWrites: 1,
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if pd == nil || !reflect.DeepEqual(pd.Decisions, Mirror(src).Decisions) || !reflect.DeepEqual(pd.Labels, Mirror(src).Labels) {
				t.Errorf("mirror = %+v, want Mirror of the source", pd)
			}
		},
	}, {
		name:       "a changed decision updates its mirror, keeping other labels",
		objs:       []client.Object{src, stale},
		wantWrites: 1,
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if len(pd.Decisions) != 2 || pd.Decisions[1].ClusterProfileRef.Name != "c2" || pd.Labels["team"] != "a" {
				t.Errorf("mirror = %+v, want c1 and c2 and the label team=a", pd)
			}
		},
	}, {
		name:       "a mirror in step is not written",
		objs:       []client.Object{src, Mirror(src)},
		wantWrites: 0,
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if pd == nil {
				t.Error("the mirror is gone")
			}
		},
	}, {
		name:       "another scheduler's PlacementDecision of the same name is left alone",
		objs:       []client.Object{src, foreign},
		wantWrites: 0,
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if !reflect.DeepEqual(pd.Decisions, foreign.Decisions) || pd.Labels[multiclusterv1alpha1.LabelClusterManagerKey] != "other" {
				t.Errorf("the other scheduler's PlacementDecision was changed: %+v", pd)
			}
		},
		wantEvent: "Warning " + ReasonNameTaken,
	}, {
		name:       "a mirror whose source is gone is left to the garbage collector",
		objs:       []client.Object{Mirror(src)},
		wantWrites: 0,
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if pd == nil {
				t.Error("the mirror was deleted by the reconciler, not by the garbage collector")
			}
		},
	}, {
		name: "no source, no mirror",
		want: func(t *testing.T, pd *multiclusterv1alpha1.PlacementDecision) {
			if pd != nil {
				t.Errorf("mirror = %+v, want none", pd)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := make([]client.Object, 0, len(tt.objs))
			for _, o := range tt.objs {
				objs = append(objs, o.DeepCopyObject().(client.Object))
			}
			c, rec, writes := reconcile(t, objs...)
			if writes != tt.wantWrites {
				t.Errorf("writes = %d, want %d", writes, tt.wantWrites)
			}
			tt.want(t, mirrorOf(t, c))
			select {
			case e := <-rec.Events:
				if tt.wantEvent == "" || !strings.Contains(e, tt.wantEvent) {
					t.Errorf("event %q, want %q", e, tt.wantEvent)
				}
			default:
				if tt.wantEvent != "" {
					t.Errorf("no event, want %q", tt.wantEvent)
				}
			}
		})
	}
}

func TestCleanupDeletesOnlyMirrors(t *testing.T) {
	mirror := Mirror(newSource("ns", "web-decision-1", "web", "c1").obj())
	foreign := mirror.DeepCopy()
	foreign.Name = "theirs"
	foreign.Labels[multiclusterv1alpha1.LabelClusterManagerKey] = "other"
	unowned := mirror.DeepCopy()
	unowned.Name, unowned.OwnerReferences = "unowned", nil
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(mirror, foreign, unowned).Build()
	n, err := (&Cleanup{Reader: c, Client: c}).deleteMirrors(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("deleteMirrors = %d, %v; want 1, nil", n, err)
	}
	list := &multiclusterv1alpha1.PlacementDecisionList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, pd := range list.Items {
		left = append(left, pd.Name)
	}
	if !reflect.DeepEqual(left, []string{"theirs", "unowned"}) {
		t.Errorf("left = %v, want the other scheduler's and the one without a source", left)
	}
}
