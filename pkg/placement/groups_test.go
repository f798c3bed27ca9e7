package placement

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// groupSummary renders groups as "index/name:cluster,cluster".
func groupSummary(gs []Group) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		s := fmt.Sprintf("%d/%s:", g.Index, g.Name)
		for k, d := range g.Decisions {
			if k > 0 {
				s += ","
			}
			s += d.ClusterName
		}
		out = append(out, s)
	}
	return out
}

func TestDecisionGroups(t *testing.T) {
	clusters := []*clusterv1.ManagedCluster{
		newCluster("c1").label("canary", "true").build(),
		newCluster("c2").label("canary", "true").claim("region", "eu").build(),
		newCluster("c3").claim("region", "eu").build(),
		newCluster("c4").claim("region", "us").build(),
		newCluster("c5").build(),
	}
	canary := clusterv1beta1.DecisionGroup{GroupName: "canary", ClusterSelector: clusterv1beta1.GroupClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}}
	eu := clusterv1beta1.DecisionGroup{GroupName: "eu", ClusterSelector: clusterv1beta1.GroupClusterSelector{
		ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}}}}
	none := clusterv1beta1.DecisionGroup{GroupName: "none", ClusterSelector: clusterv1beta1.GroupClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}}}
	tests := []struct {
		name     string
		groups   []clusterv1beta1.DecisionGroup
		per      intstr.IntOrString
		clusters []*clusterv1.ManagedCluster
		want     []string
	}{
		{name: "default is one group of all", want: []string{"0/:c1,c2,c3,c4,c5"}},
		{name: "no clusters gives one empty group", clusters: []*clusterv1.ManagedCluster{}, want: []string{"0/:"}},
		{name: "named groups first, first match wins, then the rest", groups: []clusterv1beta1.DecisionGroup{canary, eu},
			want: []string{"0/canary:c1,c2", "1/eu:c3", "2/:c4,c5"}},
		{name: "named group matching nothing has no group", groups: []clusterv1beta1.DecisionGroup{none},
			want: []string{"0/:c1,c2,c3,c4,c5"}},
		{name: "clustersPerDecisionGroup number", per: intstr.FromInt32(2),
			want: []string{"0/:c1,c2", "1/:c3,c4", "2/:c5"}},
		{name: "percentage rounds up", per: intstr.FromString("25%"),
			want: []string{"0/:c1,c2", "1/:c3,c4", "2/:c5"}},
		{name: "percentage with named groups", per: intstr.FromString("20%"), groups: []clusterv1beta1.DecisionGroup{canary},
			want: []string{"0/canary:c1", "1/canary:c2", "2/:c3", "3/:c4", "4/:c5"}},
		{name: "larger than total is total", per: intstr.FromInt32(10), want: []string{"0/:c1,c2,c3,c4,c5"}},
		{name: "100%", per: intstr.FromString("100%"), groups: []clusterv1beta1.DecisionGroup{eu},
			want: []string{"0/eu:c2,c3", "1/:c1,c4,c5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := clusters
			if tt.clusters != nil {
				cs = tt.clusters
			}
			res := NewScheduler().Schedule(defaultInput(clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{
				GroupStrategy: clusterv1beta1.GroupStrategy{DecisionGroups: tt.groups, ClustersPerDecisionGroup: tt.per}}}, cs...))
			if got := groupSummary(res.Groups); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groups = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGroupLength(t *testing.T) {
	tests := []struct {
		v       intstr.IntOrString
		total   int
		want    int
		wantErr bool
	}{
		{v: intstr.IntOrString{}, total: 7, want: 7},
		{v: intstr.FromInt32(3), total: 7, want: 3},
		{v: intstr.FromInt32(0), total: 7, want: 7},
		{v: intstr.FromString("50%"), total: 7, want: 4},
		{v: intstr.FromString("1%"), total: 7, want: 1},
		{v: intstr.FromString("3"), total: 7, want: 3},
		{v: intstr.FromString("x%"), total: 7, wantErr: true},
		{v: intstr.FromString("many"), total: 7, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.v.String(), func(t *testing.T) {
			got, err := groupLength(tt.v, tt.total)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Errorf("groupLength(%s, %d) = %d, %v; want %d, err %v", tt.v.String(), tt.total, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
