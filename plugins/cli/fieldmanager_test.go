package cli

import (
	"context"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
