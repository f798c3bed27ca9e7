package managednamespace

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// exclusiveSet returns a set selecting by the cluster set label, asking for namespaces.
func exclusiveSet(name string, namespaces ...string) clusterv1beta2.ManagedClusterSet {
	s := clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, ns := range namespaces {
		s.Spec.ManagedNamespaces = append(s.Spec.ManagedNamespaces, clusterv1.ManagedNamespaceConfig{Name: ns})
	}
	return s
}

// selectorSet returns a set selecting the clusters labeled match.
func selectorSet(name string, match map[string]string, namespaces ...string) clusterv1beta2.ManagedClusterSet {
	s := exclusiveSet(name, namespaces...)
	s.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{
		SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{MatchLabels: match},
	}
	return s
}

// entry returns a status entry without conditions.
func entry(set, ns string) clusterv1.ClusterSetManagedNamespaceConfig {
	return clusterv1.ClusterSetManagedNamespaceConfig{ManagedNamespaceConfig: clusterv1.ManagedNamespaceConfig{Name: ns}, ClusterSet: set}
}

func TestDesired(t *testing.T) {
	applied := []metav1.Condition{{Type: clusterv1.ManagedNamespaceConditionAvailable, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedNamespaceApplied}}
	withConditions := entry("prod", "team-a")
	withConditions.Conditions = applied
	deleting := exclusiveSet("prod", "team-z")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	deleting.Finalizers = []string{"x"}
	invalid := selectorSet("bad", nil, "team-x")
	invalid.Spec.ClusterSelector.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}

	tests := []struct {
		name   string
		labels map[string]string
		status []clusterv1.ClusterSetManagedNamespaceConfig
		sets   []clusterv1beta2.ManagedClusterSet
		want   []clusterv1.ClusterSetManagedNamespaceConfig
	}{
		{
			name:   "member of an exclusive set",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"},
			sets:   []clusterv1beta2.ManagedClusterSet{exclusiveSet("prod", "team-b", "team-a"), exclusiveSet("dev", "dev-a")},
			want:   []clusterv1.ClusterSetManagedNamespaceConfig{entry("prod", "team-a"), entry("prod", "team-b")},
		},
		{
			name:   "exclusive and label-selector sets, sorted by set then name",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod", "env": "eu"},
			sets: []clusterv1beta2.ManagedClusterSet{
				exclusiveSet("prod", "team-a"), selectorSet("eu", map[string]string{"env": "eu"}, "gdpr", "audit"),
				selectorSet("global", map[string]string{}, "fleet"), selectorSet("us", map[string]string{"env": "us"}, "us-only"),
			},
			want: []clusterv1.ClusterSetManagedNamespaceConfig{entry("eu", "audit"), entry("eu", "gdpr"), entry("global", "fleet"), entry("prod", "team-a")},
		},
		{
			name:   "not a member: nothing, and stale entries go",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "dev"},
			status: []clusterv1.ClusterSetManagedNamespaceConfig{withConditions},
			sets:   []clusterv1beta2.ManagedClusterSet{exclusiveSet("prod", "team-a")},
		},
		{
			name:   "the agent's conditions are kept",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"},
			status: []clusterv1.ClusterSetManagedNamespaceConfig{withConditions},
			sets:   []clusterv1beta2.ManagedClusterSet{exclusiveSet("prod", "team-a", "team-b")},
			want:   []clusterv1.ClusterSetManagedNamespaceConfig{withConditions, entry("prod", "team-b")},
		},
		{
			name:   "a set being deleted or with an invalid selector gives nothing",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"},
			sets:   []clusterv1beta2.ManagedClusterSet{deleting, invalid},
		},
		{
			name:   "one namespace asked for by two sets: one entry each",
			labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"},
			sets:   []clusterv1beta2.ManagedClusterSet{exclusiveSet("prod", "shared"), selectorSet("global", map[string]string{}, "shared")},
			want:   []clusterv1.ClusterSetManagedNamespaceConfig{entry("global", "shared"), entry("prod", "shared")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: tt.labels}}
			mc.Status.ManagedNamespaces = tt.status
			got := Desired(mc, tt.sets)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("Desired = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
