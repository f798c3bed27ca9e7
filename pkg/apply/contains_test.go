package apply

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

func TestContains(t *testing.T) {
	desired := map[string]any{
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}},
		"rules":    []any{map[string]any{"verbs": []any{"get", "list"}}},
		"count":    int64(2),
	}
	for _, tt := range []struct {
		name string
		live any
		want bool
	}{
		{"equal", desired, true},
		{"more fields and labels live", map[string]any{
			"metadata": map[string]any{"name": "a", "uid": "u", "labels": map[string]any{"x": "1", "y": "2"}},
			"rules":    []any{map[string]any{"verbs": []any{"get", "list"}, "apiGroups": []any{""}}},
			"count":    int64(2), "status": map[string]any{},
		}, true},
		{"a label differs", map[string]any{
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "2"}},
			"rules":    []any{map[string]any{"verbs": []any{"get", "list"}}}, "count": int64(2),
		}, false},
		{"a list item more", map[string]any{
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}},
			"rules":    []any{map[string]any{"verbs": []any{"get", "list"}}, map[string]any{"verbs": []any{"*"}}}, "count": int64(2),
		}, false},
		{"a list in another order", map[string]any{
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}},
			"rules":    []any{map[string]any{"verbs": []any{"list", "get"}}}, "count": int64(2),
		}, false},
		{"a field missing", map[string]any{
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}}, "count": int64(2),
		}, false},
		{"a value of another type", map[string]any{
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}},
			"rules":    []any{map[string]any{"verbs": []any{"get", "list"}}}, "count": "2",
		}, false},
		{"nothing", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Contains(tt.live, desired))
		})
	}
}

func TestUpToDate(t *testing.T) {
	ctx := t.Context()
	role := func(verbs ...string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"cluster": "c1"}},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"leases"}, Verbs: verbs}},
		}
	}
	live := role("get", "update")
	live.Labels["other"] = "kept"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"cluster": "c1"}}}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(live, ns).Build()

	require.True(t, UpToDate(ctx, c, role("get", "update")), "the stored role holds what an apply would send, and more")
	require.False(t, UpToDate(ctx, c, role("get", "update", "patch")), "a verb more")
	require.False(t, UpToDate(ctx, c, role("get")), "a verb fewer")
	desiredNS := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"cluster": "c1"}}}
	require.True(t, UpToDate(ctx, c, desiredNS))
	desiredNS.Name = "c2"
	require.False(t, UpToDate(ctx, c, desiredNS), "not there")
}
