package placement

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// setStatus sets p's status from the scheduling result and the
// PlacementDecisions written for it.
func setStatus(p *clusterv1beta1.Placement, res placement.Result, desired []desiredDecision) {
	p.Status.NumberOfSelectedClusters = int32(res.Selected)
	p.Status.DecisionGroups = decisionGroups(desired)
	for _, c := range []metav1.Condition{res.Satisfied, res.Misconfigured} {
		if c.Type == "" {
			continue // the scheduler did not decide this condition
		}
		c.ObservedGeneration = p.Generation
		meta.SetStatusCondition(&p.Status.Conditions, c)
	}
}

// decisionGroups summarizes the PlacementDecisions per decision group, in
// group order.
func decisionGroups(desired []desiredDecision) []clusterv1beta1.DecisionGroupStatus {
	out := []clusterv1beta1.DecisionGroupStatus{}
	for _, d := range desired {
		if n := len(out); n == 0 || out[n-1].DecisionGroupIndex != d.groupIndex || out[n-1].DecisionGroupName != d.groupName {
			out = append(out, clusterv1beta1.DecisionGroupStatus{
				DecisionGroupIndex: d.groupIndex, DecisionGroupName: d.groupName, Decisions: []string{},
			})
		}
		g := &out[len(out)-1]
		g.Decisions = append(g.Decisions, d.name)
		g.ClustersCount += int32(countScheduled(d.decisions))
	}
	return out
}

// countScheduled counts the decisions that name a cluster.
func countScheduled(decisions []clusterv1beta1.ClusterDecision) int {
	n := 0
	for _, d := range decisions {
		if d.ClusterName != "" {
			n++
		}
	}
	return n
}
