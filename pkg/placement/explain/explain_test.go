package explain

import (
	"context"
	"errors"
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
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// hub holds clusters c1 and c2 of set "default", bound to namespace apps,
// Placement apps/web selecting that set, and its decision naming c1 only.
func hub(t *testing.T, funcs interceptor.Funcs) client.Client {
	t.Helper()
	cluster := func(name string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "default"}}}
	}
	objs := []client.Object{
		cluster("c1"), cluster("c2"),
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "default"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
			Spec: clusterv1beta1.PlacementSpec{ClusterSets: []string{"default"}}},
		&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-decision-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "web"}},
			Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}}}},
	}
	return fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func TestRead(t *testing.T) {
	r, warnings, err := Read(t.Context(), hub(t, interceptor.Funcs{}), "apps", "web")
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, []string{"c1", "c2"}, r.Selected)
	assert.Equal(t, []string{"c1"}, r.Decided)
	assert.False(t, r.Agrees)
	require.Len(t, r.Notes, 1)
	assert.Contains(t, r.Notes[0], "the written decisions (c1) differ from what the scheduling rules select now (c1,c2)")
	require.Len(t, r.Clusters, 2)
	for _, c := range r.Clusters {
		assert.True(t, c.Selected, c.Cluster)
	}

	_, _, err = Read(t.Context(), hub(t, interceptor.Funcs{}), "apps", "missing")
	require.ErrorContains(t, err, "placement missing not found in namespace apps")
}

func TestReadWarnsOfWhatTheCallerMayNotRead(t *testing.T) {
	forbidden := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: clusterv1beta1.GroupVersion.Group, Resource: resource}, "", errors.New("no"))
	}
	r, warnings, err := Read(t.Context(), hub(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		switch list.(type) {
		case *clusterv1alpha1.AddOnPlacementScoreList:
			return forbidden("addonplacementscores")
		case *clusterv1beta1.PlacementDecisionList:
			if len(opts) == 0 {
				return forbidden("placementdecisions")
			}
		}
		return c.List(ctx, list, opts...)
	}}), "apps", "web")
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, r.Decided, "the Placement's own decisions, read in its namespace")
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "cannot list AddOnPlacementScores")
	assert.Contains(t, warnings[1], "Balance counts only the placements of namespace apps")
}
