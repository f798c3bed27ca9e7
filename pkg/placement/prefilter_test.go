package placement

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// TestPredicateFilter checks PredicateFilter against Schedule itself: every
// cluster the predicates select may match, and without CEL expressions
// exactly those do.
func TestPredicateFilter(t *testing.T) {
	clusters := []*clusterBuilder{
		newCluster("aws-prod").label("env", "prod").claim("platform.open-cluster-management.io", "AWS"),
		newCluster("gcp-dev").label("env", "dev").claim("platform.open-cluster-management.io", "GCP"),
		newCluster("gold").label("env", "dev").label("tier", "gold"),
		newCluster("bare"),
	}
	badOp := clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}}}}
	labelAndCEL := clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
		CelSelector:   clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.metadata.name == "gold"`}}}}
	tests := []struct {
		name  string
		preds []clusterv1beta1.ClusterPredicate
		// want are the clusters that may match; nil means exactly the
		// selected ones (no CEL).
		want []string
	}{
		{name: "no predicates: every cluster", want: []string{"aws-prod", "bare", "gcp-dev", "gold"}},
		{name: "empty predicate: every cluster", preds: []clusterv1beta1.ClusterPredicate{{}}},
		{name: "label", preds: []clusterv1beta1.ClusterPredicate{labelPredicate(map[string]string{"env": "dev"})}},
		{name: "label NotIn", preds: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}}}}}}}},
		{name: "claim In", preds: []clusterv1beta1.ClusterPredicate{claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpIn, "GCP")}},
		{name: "claim DoesNotExist", preds: []clusterv1beta1.ClusterPredicate{claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpDoesNotExist)}},
		{name: "label and claim ANDed", preds: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
			ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpExists}}}}}}},
		{name: "predicates ORed", preds: []clusterv1beta1.ClusterPredicate{
			labelPredicate(map[string]string{"tier": "gold"}), claimPredicate("platform.open-cluster-management.io", metav1.LabelSelectorOpIn, "AWS")}},
		{name: "CEL alone: every cluster may match", preds: []clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.metadata.name == "gold"`)},
			want: []string{"aws-prod", "bare", "gcp-dev", "gold"}},
		{name: "CEL with a label selector: the label selector narrows", preds: []clusterv1beta1.ClusterPredicate{labelAndCEL},
			want: []string{"gcp-dev", "gold"}},
		{name: "CEL-only predicate ORed with a label one: every cluster", preds: []clusterv1beta1.ClusterPredicate{
			labelPredicate(map[string]string{"env": "prod"}), celPredicate(`false`)},
			want: []string{"aws-prod", "bare", "gcp-dev", "gold"}},
		{name: "misconfigured: every cluster (the safe side)", preds: []clusterv1beta1.ClusterPredicate{badOp},
			want: []string{"aws-prod", "bare", "gcp-dev", "gold"}},
	}
	s := NewScheduler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := defaultInput(clusterv1beta1.PlacementSpec{Predicates: tt.preds})
			for _, b := range clusters {
				in.Clusters = append(in.Clusters, b.build())
			}
			selected := sortedSelected(s.Schedule(in))
			f := NewPredicateFilter(tt.preds)
			var may []string
			for _, c := range in.Clusters {
				if f.MayMatch(c) {
					may = append(may, c.Name)
				}
			}
			slices.Sort(may)
			for _, name := range selected {
				if !slices.Contains(may, name) {
					t.Errorf("the scheduler selects %s, which the filter rejects (may match %v)", name, may)
				}
			}
			want := tt.want
			if want == nil {
				want = selected
			}
			if !slices.Equal(may, want) {
				t.Errorf("may match %v, want %v (selected %v)", may, want, selected)
			}
		})
	}
	if !(PredicateFilter{}).MayMatch(nil) {
		t.Error("the zero filter rejects a cluster")
	}
}
