package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

func TestCompleteLast(t *testing.T) {
	names := []string{"cluster1", "cluster2", "edge"}
	for _, tt := range []struct {
		in   string
		want string
	}{{"", "cluster1 cluster2 edge"}, {"cl", "cluster1 cluster2"}, {"cluster1,", "cluster1,cluster2 cluster1,edge"}, {"edge,cluster2,c", "edge,cluster2,cluster1"}} {
		if got := strings.Join(CompleteLast(names, tt.in), " "); got != tt.want {
			t.Errorf("CompleteLast(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestListNames(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster2"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "mon"}},
		&addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "helloworld"}},
	).Build()
	tests := []struct {
		name string
		list client.ObjectList
		opts []client.ListOption
		want []string
	}{
		{"cluster-scoped", &clusterv1.ManagedClusterList{}, nil, []string{"cluster1", "cluster2"}},
		{"one namespace", &clusterv1beta1.PlacementList{}, []client.ListOption{client.InNamespace("ops")}, []string{"mon"}},
		{"add-ons", &addonv1alpha1.ClusterManagementAddOnList{}, nil, []string{"helloworld"}},
		{"none", &clusterv1beta2.ManagedClusterSetList{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ListNames(t.Context(), c, tt.list, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ListNames = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExceptArgs(t *testing.T) {
	all := cobra.FixedCompletions([]string{"cluster1", "cluster2", "edge"}, cobra.ShellCompDirectiveNoFileComp)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no argument yet", nil, "cluster1 cluster2 edge"},
		{"one given", []string{"cluster2"}, "cluster1 edge"},
		{"every name given", []string{"edge", "cluster1", "cluster2"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, directive := ExceptArgs(all)(&cobra.Command{}, tt.args, "")
			if strings.Join(got, " ") != tt.want || directive != cobra.ShellCompDirectiveNoFileComp {
				t.Errorf("ExceptArgs(%v) = %q, %v; want %q, NoFileComp", tt.args, got, directive, tt.want)
			}
		})
	}
}
