package rollout

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// decision builds a PlacementDecision with labels and decided clusters.
func decision(labels map[string]string, clusters ...string) clusterv1beta1.PlacementDecision {
	pd := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	for _, c := range clusters {
		pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return pd
}

func TestDecisionGroups(t *testing.T) {
	group := func(index, name string) map[string]string {
		return map[string]string{clusterv1beta1.DecisionGroupIndexLabel: index, clusterv1beta1.DecisionGroupNameLabel: name}
	}
	tests := []struct {
		name      string
		decisions []clusterv1beta1.PlacementDecision
		want      []Group
	}{
		{name: "no decision", want: []Group{}},
		{name: "ungrouped decisions form group 0", decisions: []clusterv1beta1.PlacementDecision{
			decision(nil, "c2", "c1"), decision(map[string]string{clusterv1beta1.DecisionGroupIndexLabel: "x"}, "c3"),
		}, want: []Group{{Index: 0, Clusters: []string{"c1", "c2", "c3"}}}},
		{name: "groups by index, named, in index order, empty names skipped", decisions: []clusterv1beta1.PlacementDecision{
			decision(group("1", "east"), "e2", "", "e1"), decision(group("0", "west"), "w1"), decision(group("1", ""), "e3"),
		}, want: []Group{
			{Index: 0, Name: "west", Clusters: []string{"w1"}},
			{Index: 1, Name: "east", Clusters: []string{"e1", "e2", "e3"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecisionGroups(tt.decisions); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecisionGroups() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
