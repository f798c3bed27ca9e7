package patch

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// cond returns a condition of type t with status s and reason r.
func cond(t string, s metav1.ConditionStatus, r string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: r, Message: r, LastTransitionTime: metav1.Unix(1, 0)}
}

// clusterBuilder builds the ManagedCluster of a test case.
type clusterBuilder struct{ mc *clusterv1.ManagedCluster }

func newCluster() clusterBuilder {
	return clusterBuilder{&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}}
}

func (b clusterBuilder) cond(c metav1.Condition) clusterBuilder {
	b.mc.Status.Conditions = append(b.mc.Status.Conditions, c)
	return b
}

func (b clusterBuilder) finalizer(f string) clusterBuilder {
	b.mc.Finalizers = append(b.mc.Finalizers, f)
	return b
}

func (b clusterBuilder) build() *clusterv1.ManagedCluster { return b.mc }

// calls counts the patches a client sent.
type calls struct{ object, status int }

// newClient returns a fake client holding obj that counts patches.
func newClient(obj client.Object, n *calls) client.Client {
	return fake.NewClientBuilder().WithScheme(apis.Scheme).
		WithObjects(obj).WithStatusSubresource(obj).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				n.object++
				return c.Patch(ctx, obj, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				n.status++
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
}

const (
	typeOurs   = "Ours"
	typeTheirs = "Theirs"
	typeGone   = "Gone"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name    string
		initial *clusterv1.ManagedCluster
		// mutate is this reconcile's change; other is another writer's,
		// made on the API server between the read and the patch.
		mutate, other func(*clusterv1.ManagedCluster)
		want          calls
		conflict      bool
		// sentSpec and sentStatus are what SentSpec and SentStatus report
		// afterwards.
		sentSpec, sentStatus bool
		// check inspects the object on the API server afterwards.
		check func(t *testing.T, got *clusterv1.ManagedCluster)
	}{{
		name:    "nothing changed sends nothing",
		initial: newCluster().cond(cond(typeOurs, metav1.ConditionTrue, "A")).build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
	}, {
		name:    "a condition is set with one status patch",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		sentStatus: true,
		want:       calls{status: 1},
		check:      hasConditions(typeOurs + "=A"),
	}, {
		name:    "a condition another writer set in between is kept",
		initial: newCluster().cond(cond(typeOurs, metav1.ConditionFalse, "Old")).build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		other: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeTheirs, metav1.ConditionTrue, "B"))
		},
		sentStatus: true,
		want:       calls{status: 2},
		check:      hasConditions(typeOurs+"=A", typeTheirs+"=B"),
	}, {
		name:    "a condition removed is removed, another writer's kept",
		initial: newCluster().cond(cond(typeGone, metav1.ConditionTrue, "A")).build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.RemoveStatusCondition(&mc.Status.Conditions, typeGone)
		},
		other: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeTheirs, metav1.ConditionTrue, "B"))
		},
		sentStatus: true,
		want:       calls{status: 2},
		check:      hasConditions(typeTheirs + "=B"),
	}, {
		name:    "the same condition set to the same value by both is no conflict",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		other: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		want:  calls{status: 1},
		check: hasConditions(typeOurs + "=A"),
	}, {
		name:    "the same condition set to different values is a conflict",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		other: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionFalse, "B"))
		},
		want:     calls{status: 1},
		conflict: true,
		check:    hasConditions(typeOurs + "=B"),
	}, {
		// The reconcile read the condition and kept it: re-applying its
		// changes could undo the newer value, so it decides again.
		name:    "a condition the reconcile holds but left alone, changed by another writer, is a conflict",
		initial: newCluster().cond(cond(typeTheirs, metav1.ConditionTrue, "Old")).build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		other: func(mc *clusterv1.ManagedCluster) {
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeTheirs, metav1.ConditionFalse, "New"))
		},
		want:     calls{status: 1},
		conflict: true,
		check:    hasConditions(typeTheirs + "=New"),
	}, {
		name:    "finalizers merge by value",
		initial: newCluster().finalizer("a").build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			mc.Finalizers = []string{"ours"}
		},
		other: func(mc *clusterv1.ManagedCluster) {
			mc.Finalizers = append(mc.Finalizers, "theirs")
		},
		sentSpec: true,
		want:     calls{object: 2},
		check: func(t *testing.T, got *clusterv1.ManagedCluster) {
			if want := []string{"ours", "theirs"}; !slices.Equal(got.Finalizers, want) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, want)
			}
		},
	}, {
		name:    "labels and spec changed apart are both kept",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			metav1.SetMetaDataLabel(&mc.ObjectMeta, "ours", "1")
			mc.Spec.HubAcceptsClient = true
		},
		other: func(mc *clusterv1.ManagedCluster) {
			metav1.SetMetaDataLabel(&mc.ObjectMeta, "theirs", "2")
			mc.Spec.LeaseDurationSeconds = 90
		},
		sentSpec: true,
		want:     calls{object: 2},
		check: func(t *testing.T, got *clusterv1.ManagedCluster) {
			if got.Labels["ours"] != "1" || got.Labels["theirs"] != "2" || !got.Spec.HubAcceptsClient || got.Spec.LeaseDurationSeconds != 90 {
				t.Errorf("labels %v, spec %+v: a change was lost", got.Labels, got.Spec)
			}
		},
	}, {
		// A reconcile whose cache missed its own earlier write sends
		// nothing, and SentSpec says so.
		name:    "the same list set by both is sent once",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "ours", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Unix(1, 0)}}
		},
		other: func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "ours", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Unix(1, 0)}}
		},
		want: calls{object: 1},
		check: func(t *testing.T, got *clusterv1.ManagedCluster) {
			if len(got.Spec.Taints) != 1 || got.Spec.Taints[0].Key != "ours" {
				t.Errorf("taints %v", got.Spec.Taints)
			}
		},
	}, {
		name:    "a list both changed is a conflict",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "ours", Effect: clusterv1.TaintEffectNoSelect}}
		},
		other: func(mc *clusterv1.ManagedCluster) {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "theirs", Effect: clusterv1.TaintEffectNoSelect}}
		},
		want:     calls{object: 1},
		conflict: true,
		check: func(t *testing.T, got *clusterv1.ManagedCluster) {
			if len(got.Spec.Taints) != 1 || got.Spec.Taints[0].Key != "theirs" {
				t.Errorf("taints %v, want the other writer's", got.Spec.Taints)
			}
		},
	}, {
		name:    "metadata and status change with one patch each",
		initial: newCluster().build(),
		mutate: func(mc *clusterv1.ManagedCluster) {
			mc.Finalizers = append(mc.Finalizers, "ours")
			meta.SetStatusCondition(&mc.Status.Conditions, cond(typeOurs, metav1.ConditionTrue, "A"))
		},
		sentStatus: true,
		sentSpec:   true,
		want:       calls{object: 1, status: 1},
		check: func(t *testing.T, got *clusterv1.ManagedCluster) {
			hasConditions(typeOurs+"=A")(t, got)
			if !slices.Equal(got.Finalizers, []string{"ours"}) {
				t.Errorf("finalizers %v", got.Finalizers)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var n calls
			c := newClient(tt.initial, &n)
			obj := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: "c1"}, obj); err != nil {
				t.Fatal(err)
			}
			h := NewHelper(obj, c)
			tt.mutate(obj)
			if tt.other != nil {
				otherWrite(ctx, t, c, tt.other)
				n = calls{}
			}
			err := h.Patch(ctx, obj)
			switch {
			case tt.conflict && !apierrors.IsConflict(err):
				t.Fatalf("Patch: %v, want a conflict", err)
			case !tt.conflict && err != nil:
				t.Fatalf("Patch: %v", err)
			}
			if n != tt.want {
				t.Errorf("sent %+v patches, want %+v", n, tt.want)
			}
			if h.SentSpec() != tt.sentSpec || h.SentStatus() != tt.sentStatus {
				t.Errorf("SentSpec(), SentStatus() = %v, %v, want %v, %v", h.SentSpec(), h.SentStatus(), tt.sentSpec, tt.sentStatus)
			}
			got := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: "c1"}, got); err != nil {
				t.Fatal(err)
			}
			if !tt.conflict && got.ResourceVersion != obj.ResourceVersion {
				t.Errorf("obj has resourceVersion %s, the server %s", obj.ResourceVersion, got.ResourceVersion)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// otherWrite changes the object on the API server as another writer.
func otherWrite(ctx context.Context, t *testing.T, c client.Client, change func(*clusterv1.ManagedCluster)) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "c1"}, mc); err != nil {
		t.Fatal(err)
	}
	base := mc.DeepCopy()
	change(mc)
	if err := c.Patch(ctx, mc.DeepCopy(), client.MergeFrom(base)); err != nil {
		t.Fatalf("other writer: %v", err)
	}
	if err := c.Status().Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatalf("other writer: %v", err)
	}
}

// hasConditions checks that the object has exactly the conditions given as
// "type=reason", in any order.
func hasConditions(want ...string) func(*testing.T, *clusterv1.ManagedCluster) {
	return func(t *testing.T, got *clusterv1.ManagedCluster) {
		t.Helper()
		var have []string
		for _, c := range got.Status.Conditions {
			have = append(have, c.Type+"="+c.Reason)
		}
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(have, want) {
			t.Errorf("conditions %v, want %v", have, want)
		}
	}
}

func TestHasChanges(t *testing.T) {
	obj := newCluster().cond(cond(typeOurs, metav1.ConditionTrue, "A")).build()
	h := NewHelper(obj, fake.NewClientBuilder().WithScheme(apis.Scheme).Build())
	if changed, err := h.HasChanges(obj); err != nil || changed {
		t.Errorf("HasChanges of the baseline = %v, %v; want false", changed, err)
	}
	obj.Status.Conditions[0].Reason = "B"
	if changed, err := h.HasChanges(obj); err != nil || !changed {
		t.Errorf("HasChanges after a change = %v, %v; want true", changed, err)
	}
}
