package cli

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

func TestGetOrList(t *testing.T) {
	placement := func(ns, name string) *clusterv1beta1.Placement {
		return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).
		WithObjects(placement("b", "web"), placement("a", "web"), placement("a", "db")).Build()
	errNotFound := errors.New("no such placement")
	what := Lookup{Kind: "Placement", Host: "https://hub", NotFound: errNotFound}
	tests := []struct {
		name, namespace, object string
		want                    []string
		wantErr                 error
	}{
		{name: "every namespace, sorted", want: []string{"a/db", "a/web", "b/web"}},
		{name: "one namespace", namespace: "a", want: []string{"a/db", "a/web"}},
		{name: "one object", namespace: "b", object: "web", want: []string{"b/web"}},
		{name: "not found", namespace: "b", object: "db", wantErr: errNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := &clusterv1beta1.PlacementList{}
			err := GetOrList(context.Background(), c, list, &list.Items, tt.namespace, tt.object, what)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, p := range list.Items {
				got = append(got, p.Namespace+"/"+p.Name)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
