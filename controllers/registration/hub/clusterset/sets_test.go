package clusterset

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

func TestMembership(t *testing.T) {
	cluster := func(name, set string) clusterv1.ManagedCluster {
		mc := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if set != "" {
			mc.Labels[clusterv1beta2.ClusterSetLabel] = set
		}
		return mc
	}
	clusters := []clusterv1.ManagedCluster{cluster("a", "default"), cluster("b", "prod"), cluster("c", "")}
	defaultSpec, _ := DesiredSpec("default")
	globalSpec, _ := DesiredSpec("global")
	tests := []struct {
		name string
		set  clusterv1beta2.ManagedClusterSet
		want int
		cond string
	}{
		{"default selects its label", clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: defaultSpec}, 1, "1 ManagedClusters selected"},
		{"global selects all", clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "global"}, Spec: globalSpec}, 3, "3 ManagedClusters selected"},
		{"empty set", clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "none"}}, 0, "No ManagedCluster selected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := tt.set.Spec.ClusterSelector.Selector(tt.set.Name)
			if err != nil {
				t.Fatal(err)
			}
			n := CountMembers(sel, clusters)
			if n != tt.want {
				t.Errorf("CountMembers = %d, want %d", n, tt.want)
			}
			cond := EmptyCondition(n, 3)
			if cond.Message != tt.cond || cond.ObservedGeneration != 3 {
				t.Errorf("condition %+v, want message %q", cond, tt.cond)
			}
			if (n == 0) != (cond.Status == metav1.ConditionTrue) {
				t.Errorf("ClusterSetEmpty %s for %d clusters", cond.Status, n)
			}
		})
	}
	if _, builtIn := DesiredSpec("prod"); builtIn {
		t.Error("prod reported as a built-in set")
	}
}
