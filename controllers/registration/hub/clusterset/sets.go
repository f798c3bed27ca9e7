package clusterset

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// DesiredSpec returns the spec the hub maintains for the built-in set name
// and whether name is a built-in set.
func DesiredSpec(name string) (clusterv1beta2.ManagedClusterSetSpec, bool) {
	switch name {
	case clusterv1beta2.DefaultClusterSetName:
		return clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}}, true
	case clusterv1beta2.GlobalClusterSetName:
		return clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{},
		}}, true
	}
	return clusterv1beta2.ManagedClusterSetSpec{}, false
}

// CountMembers returns how many of clusters sel selects.
func CountMembers(sel labels.Selector, clusters []clusterv1.ManagedCluster) int {
	n := 0
	for i := range clusters {
		if sel.Matches(labels.Set(clusters[i].Labels)) {
			n++
		}
	}
	return n
}

// EmptyCondition returns the ClusterSetEmpty condition of a set selecting n clusters.
func EmptyCondition(n int, generation int64) metav1.Condition {
	if n == 0 {
		return metav1.Condition{
			Type: clusterv1beta2.ManagedClusterSetConditionEmpty, Status: metav1.ConditionTrue,
			Reason: clusterv1beta2.ReasonNoClusterMatched, Message: "No ManagedCluster selected", ObservedGeneration: generation,
		}
	}
	return metav1.Condition{
		Type: clusterv1beta2.ManagedClusterSetConditionEmpty, Status: metav1.ConditionFalse,
		Reason: clusterv1beta2.ReasonClustersSelected, Message: fmt.Sprintf("%d ManagedClusters selected", n), ObservedGeneration: generation,
	}
}

// InvalidSelectorCondition returns the ClusterSetEmpty condition of a set whose
// selector cannot be evaluated: such a set selects no cluster.
func InvalidSelectorCondition(err error, generation int64) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1beta2.ManagedClusterSetConditionEmpty, Status: metav1.ConditionTrue,
		Reason:             clusterv1beta2.ReasonInvalidClusterSelector,
		Message:            fmt.Sprintf("%v; fix spec.clusterSelector", err),
		ObservedGeneration: generation,
	}
}
