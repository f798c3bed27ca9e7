package placement

import (
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// testNS is the namespace of the placements under test.
const testNS = "apps"

// now is the scheduling time of every test.
var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// clusterBuilder builds ManagedClusters for tests.
type clusterBuilder struct{ c *clusterv1.ManagedCluster }

// newCluster starts a cluster in the default set.
func newCluster(name string) *clusterBuilder {
	return &clusterBuilder{c: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "default"}}}}
}

func (b *clusterBuilder) label(k, v string) *clusterBuilder { b.c.Labels[k] = v; return b }
func (b *clusterBuilder) set(name string) *clusterBuilder {
	return b.label(clusterv1beta2.ClusterSetLabel, name)
}
func (b *clusterBuilder) claim(k, v string) *clusterBuilder {
	b.c.Status.ClusterClaims = append(b.c.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: k, Value: v})
	return b
}
func (b *clusterBuilder) taint(key, value string, effect clusterv1.TaintEffect, added time.Time) *clusterBuilder {
	b.c.Spec.Taints = append(b.c.Spec.Taints, clusterv1.Taint{Key: key, Value: value, Effect: effect,
		TimeAdded: metav1.NewTime(added)})
	return b
}
func (b *clusterBuilder) alloc(cpu, mem string) *clusterBuilder {
	b.c.Status.Allocatable = clusterv1.ResourceList{}
	if cpu != "" {
		b.c.Status.Allocatable[clusterv1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		b.c.Status.Allocatable[clusterv1.ResourceMemory] = resource.MustParse(mem)
	}
	return b
}
func (b *clusterBuilder) deleting() *clusterBuilder {
	t := metav1.NewTime(now)
	b.c.DeletionTimestamp = &t
	return b
}
func (b *clusterBuilder) build() *clusterv1.ManagedCluster { return b.c }

// exclusiveSet returns a set selecting by the cluster set label.
func exclusiveSet(name string) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// labelSet returns a set selecting clusters by labels.
func labelSet(name string, match map[string]string) *clusterv1beta2.ManagedClusterSet {
	s := exclusiveSet(name)
	s.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
		LabelSelector: &metav1.LabelSelector{MatchLabels: match}}
	return s
}

// binding binds a set to the test namespace.
func binding(set string) *clusterv1beta2.ManagedClusterSetBinding {
	return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: testNS},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
}

// score returns an AddOnPlacementScore in a cluster's namespace.
func score(cluster, name string, validUntil *time.Time, items ...clusterv1alpha1.AddOnPlacementScoreItem) *clusterv1alpha1.AddOnPlacementScore {
	s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster}}
	s.Status.Scores = items
	if validUntil != nil {
		t := metav1.NewTime(*validUntil)
		s.Status.ValidUntil = &t
	}
	return s
}

// placement returns a placement in the test namespace with the spec.
func placement(spec clusterv1beta1.PlacementSpec) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: testNS}, Spec: spec}
}

// defaultInput schedules the placement over the clusters, all in the bound
// default set.
func defaultInput(spec clusterv1beta1.PlacementSpec, clusters ...*clusterv1.ManagedCluster) Input {
	return Input{
		Placement:   placement(spec),
		Clusters:    clusters,
		ClusterSets: []*clusterv1beta2.ManagedClusterSet{exclusiveSet("default")},
		Bindings:    []*clusterv1beta2.ManagedClusterSetBinding{binding("default")},
		Now:         now,
	}
}

// selectedNames returns the selected clusters in decision order over all groups.
func selectedNames(res Result) []string {
	var out []string
	for _, g := range res.Groups {
		for _, d := range g.Decisions {
			out = append(out, d.ClusterName)
		}
	}
	return out
}

// sortedSelected returns the selected cluster names, sorted.
func sortedSelected(res Result) []string {
	out := selectedNames(res)
	sort.Strings(out)
	return out
}

// explanation returns the explanation of a cluster, failing when it is missing.
func explanation(t *testing.T, res Result, name string) Explanation {
	t.Helper()
	for _, e := range res.Clusters {
		if e.Cluster == name {
			return e
		}
	}
	t.Fatalf("no explanation for cluster %s in %+v", name, res.Clusters)
	return Explanation{}
}

// labelPredicate is a predicate with matchLabels.
func labelPredicate(match map[string]string) clusterv1beta1.ClusterPredicate {
	return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: match}}}
}

// claimPredicate is a predicate with one claim requirement.
func claimPredicate(key string, op metav1.LabelSelectorOperator, values ...string) clusterv1beta1.ClusterPredicate {
	return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: key, Operator: op, Values: values}}}}}
}

// celPredicate is a predicate with CEL expressions.
func celPredicate(exprs ...string) clusterv1beta1.ClusterPredicate {
	return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: exprs}}}
}
