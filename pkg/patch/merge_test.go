package patch

import (
	"context"
	"reflect"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// keyOf keys a list item by its first letter.
func keyOf(item any) (string, bool) {
	s, ok := item.(string)
	if !ok || s == "" {
		return "", false
	}
	return s[:1], true
}

func TestAddedItems(t *testing.T) {
	tests := []struct {
		name               string
		base, ours, theirs []any
		added              []any
		changed            []string
	}{
		{name: "theirs added what ours lacks", base: []any{"a1"}, ours: []any{"a1", "b1"}, theirs: []any{"a1", "c1", "d1"},
			added: []any{"c1", "d1"}},
		{name: "theirs added what ours holds alike", base: []any{}, ours: []any{"a1"}, theirs: []any{"a1"}},
		{name: "theirs added what ours holds otherwise", base: []any{}, ours: []any{"a1"}, theirs: []any{"a2"},
			changed: []string{"a"}},
		{name: "theirs changed what ours left alone", base: []any{"a1", "b1"}, ours: []any{"a1", "b2"}, theirs: []any{"a2", "b1"},
			changed: []string{"a"}},
		{name: "theirs removed what ours holds", base: []any{"a1"}, ours: []any{"a1"}, theirs: []any{},
			changed: []string{"a"}},
		{name: "both removed", base: []any{"a1"}, ours: []any{}, theirs: []any{}},
		{name: "theirs changed an item without a key", base: []any{"", "a1"}, ours: []any{"", "a1"}, theirs: []any{7, "a1"},
			changed: []string{"(an item without a key)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			added, changed := addedItems(tt.base, tt.ours, tt.theirs, keyOf)
			if !reflect.DeepEqual(added, tt.added) {
				t.Errorf("added %v, want %v", added, tt.added)
			}
			if !slices.Equal(changed, tt.changed) {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
		})
	}
}

func TestHeld(t *testing.T) {
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name               string
		theirs, base, ours map[string]any
		want               []string
	}{
		{name: "added a field both lack", theirs: m("b", 2.0), base: m("a", 1.0), ours: m("a", 1.0)},
		{name: "added a key to a map both hold", theirs: m("m", m("b", 2.0)), base: m("m", m("a", 1.0)), ours: m("m", m("a", 1.0))},
		{name: "added a map ours lacks", theirs: m("m", m("b", 2.0)), base: m(), ours: m()},
		{name: "changed a field ours holds alike", theirs: m("a", 2.0), base: m("a", 1.0), ours: m("a", 2.0)},
		{name: "changed a field ours left alone", theirs: m("a", 2.0), base: m("a", 1.0), ours: m("a", 1.0),
			want: []string{"a"}},
		{name: "changed a nested field", theirs: m("m", m("a", 2.0)), base: m("m", m("a", 1.0)), ours: m("m", m("a", 1.0)),
			want: []string{"m.a"}},
		{name: "removed a field ours holds", theirs: m("a", nil), base: m("a", 1.0), ours: m("a", 1.0),
			want: []string{"a"}},
		{name: "server fields", theirs: m("metadata", m("resourceVersion", "2", "generation", 2.0)),
			base: m("metadata", m("resourceVersion", "1", "generation", 1.0)), ours: m("metadata", m("resourceVersion", "1", "generation", 1.0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := held(tt.theirs, tt.base, tt.ours, ""); !slices.Equal(got, tt.want) {
				t.Errorf("held %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPatchConflictOutlastsBackoff checks that a conflict is returned when
// the object read again never moves on, as with a cache that is behind.
func TestPatchConflictOutlastsBackoff(t *testing.T) {
	defer func(b wait.Backoff) { conflictBackoff = b }(conflictBackoff)
	conflictBackoff = wait.Backoff{Steps: 3, Duration: 1}
	ctx := context.Background()
	mc := newCluster().build()
	patches := 0
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(mc).WithStatusSubresource(mc).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				patches++
				return apierrors.NewConflict(schema.GroupResource{Resource: "managedclusters"}, "c1", nil)
			},
		}).Build()
	obj := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "c1"}, obj); err != nil {
		t.Fatal(err)
	}
	h := NewHelper(obj, c)
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: typeOurs, Status: metav1.ConditionTrue, Reason: "A"})
	want := obj.DeepCopy()
	if err := h.Patch(ctx, obj); !apierrors.IsConflict(err) {
		t.Fatalf("Patch: %v, want a conflict", err)
	}
	if patches != 1 {
		t.Errorf("sent %d patches, want 1: the object read again never changed", patches)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("a failed Patch changed obj")
	}
}
