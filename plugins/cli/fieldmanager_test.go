package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// managerVerb records the field manager its Run's context carries.
type managerVerb struct{ manager string }

func (v *managerVerb) Complete(*cobra.Command, []string) error { return nil }
func (v *managerVerb) Validate() error                         { return nil }
func (v *managerVerb) Run(ctx context.Context) error {
	v.manager = FieldManagerFrom(ctx)
	return nil
}

func TestFieldManager(t *testing.T) {
	tests := []struct {
		name    string
		path    []string
		install string
		want    string
	}{
		{name: "verb", path: []string{"accept"}, want: "kubectl-ocm-accept"},
		{name: "subcommand", path: []string{"work", "create"}, want: "kubectl-ocm-work-create"},
		{name: "three words", path: []string{"work", "rollout", "approve"}, want: "kubectl-ocm-work-rollout-approve"},
		{name: "install verb", path: []string{"hub", "init"}, install: "init", want: InstallFieldManager},
		{name: "below an install verb", path: []string{"upgrade", "hub"}, install: "upgrade", want: InstallFieldManager},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := &cobra.Command{Use: "kubectl-ocm"}
			parent := root
			v := &managerVerb{}
			for _, w := range tt.path {
				c := &cobra.Command{Use: w + " [ARG]", RunE: RunE(v)}
				if w == tt.install {
					InstallVerb(c)
				}
				parent.AddCommand(c)
				parent = c
			}
			assert.Equal(t, tt.want, FieldManager(parent))
			root.SetArgs(tt.path)
			require.NoError(t, root.Execute())
			assert.Equal(t, tt.want, v.manager, "the context Run gets")
		})
	}
}

func TestPinFieldManagers(t *testing.T) {
	root := &cobra.Command{Use: "kubectl-ocm"}
	work := &cobra.Command{Use: "work"}
	create := &cobra.Command{Use: "create", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(work)
	work.AddCommand(create)
	PinFieldManagers(create)
	work.RemoveCommand(create)
	create.Use = "work"
	alias := &cobra.Command{Use: "create"}
	root.AddCommand(alias)
	alias.AddCommand(create)
	assert.Equal(t, "kubectl-ocm-work-create", FieldManager(create), "create work writes as work create")
}

func TestFieldManagerFromDefault(t *testing.T) {
	assert.Equal(t, InstallFieldManager, FieldManagerFrom(context.Background()))
	assert.Equal(t, "kubectl-ocm-x", FieldManagerFrom(WithFieldManager(context.Background(), "kubectl-ocm-x")))
}

// TestApplyFieldManager checks that Apply sends the field manager of the
// context's verb.
func TestApplyFieldManager(t *testing.T) {
	var got string
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			o := &client.ApplyOptions{}
			o.ApplyOptions(opts)
			got = o.FieldManager
			return nil
		},
	}).Build()
	ctx := WithFieldManager(context.Background(), "kubectl-ocm-work-create")
	_, err := Apply(ctx, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}}, false)
	require.NoError(t, err)
	assert.Equal(t, "kubectl-ocm-work-create", got)
}

// TestApplyAdoptsLegacyFields checks that a verb re-applying an object an
// earlier release applied as kubectl-ocm takes over its fields: a label
// the verb no longer sends is removed, and kubectl-ocm owns nothing.
func TestApplyAdoptsLegacyFields(t *testing.T) {
	tests := []struct {
		name       string
		legacy     map[string]string
		apply      map[string]string
		conflicts  int
		wantLabels map[string]string
	}{
		{name: "another writer in between", legacy: map[string]string{"a": "1", "b": "2"}, apply: map[string]string{"a": "1"}, conflicts: 2, wantLabels: map[string]string{"a": "1"}},
		{name: "label dropped", legacy: map[string]string{"a": "1", "b": "2"}, apply: map[string]string{"a": "1"}, wantLabels: map[string]string{"a": "1"}},
		{name: "label changed", legacy: map[string]string{"a": "1"}, apply: map[string]string{"a": "2"}, wantLabels: map[string]string{"a": "2"}},
		{name: "no legacy manager", apply: map[string]string{"a": "1"}, wantLabels: map[string]string{"a": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			conflicts := tt.conflicts
			c := fake.NewClientBuilder().WithReturnManagedFields().WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errors.New("changed meanwhile"))
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			}).Build()
			cm := func(labels map[string]string) *corev1.ConfigMap {
				return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b", Labels: labels}, Data: map[string]string{"k": "v"}}
			}
			if tt.legacy != nil {
				_, err := Apply(WithFieldManager(ctx, legacyFieldManager), c, cm(tt.legacy), false)
				require.NoError(t, err)
			}
			u, err := Apply(WithFieldManager(ctx, "kubectl-ocm-work-create"), c, cm(tt.apply), false)
			require.NoError(t, err)
			assert.Equal(t, tt.wantLabels, u.GetLabels())
			got := &corev1.ConfigMap{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "a", Namespace: "b"}, got))
			assert.Equal(t, tt.wantLabels, got.Labels)
			var managers []string
			for _, e := range got.ManagedFields {
				managers = append(managers, e.Manager)
			}
			assert.Equal(t, []string{"kubectl-ocm-work-create"}, managers)
			assert.Zero(t, conflicts)
		})
	}
}
