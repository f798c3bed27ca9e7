package join

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// TestListHubsRetriesConflicts: the Klusterlet operator writing the
// Klusterlet between the read and the patch of --add-hub makes the patch
// conflict; listHubs reads it again and lists the hubs on the new version,
// keeping what the operator wrote.
func TestListHubsRetriesConflicts(t *testing.T) {
	k := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: "klusterlet"}, Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1"}}
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(k.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts == 0 {
				conflicts++
				// The operator writes first.
				current := &operatorv1.Klusterlet{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
					return err
				}
				current.Annotations = map[string]string{"operator": "was here"}
				if err := c.Update(ctx, current); err != nil {
					return err
				}
				return apierrors.NewConflict(schema.GroupResource{Group: operatorv1.GroupVersion.Group, Resource: "klusterlets"}, obj.GetName(), nil)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	read := &operatorv1.Klusterlet{}
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(k), read))
	o := &Options{}
	require.NoError(t, o.listHubs(t.Context(), c, read, []string{"bootstrap-hub-kubeconfig", "bootstrap-hub-kubeconfig-hub2"}))
	assert.Equal(t, 1, conflicts)

	got := &operatorv1.Klusterlet{}
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(k), got))
	assert.Equal(t, "was here", got.Annotations["operator"])
	b := got.Spec.RegistrationConfiguration.BootstrapKubeConfigs
	assert.Equal(t, operatorv1.LocalSecrets, b.Type)
	assert.Equal(t, []operatorv1.KubeConfigSecret{{Name: "bootstrap-hub-kubeconfig"}, {Name: "bootstrap-hub-kubeconfig-hub2"}}, b.LocalSecrets.KubeConfigSecrets)
	assert.EqualValues(t, operatorv1.DefaultHubConnectionTimeoutSeconds, b.LocalSecrets.HubConnectionTimeoutSeconds)
}
