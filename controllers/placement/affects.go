package placement

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// clusterEvent is one ManagedCluster event as the cluster handler sees it.
type clusterEvent struct {
	// old and cur are the cluster before and after the event; old is nil
	// for a creation, cur for a deletion.
	old, cur *clusterv1.ManagedCluster
	// change is what changed: all for a creation or a deletion.
	change clusterChange
	// membership reports that the cluster joined or left a set, started
	// being deleted, was created or was deleted: the number of candidates
	// of the placements of its sets changed.
	membership bool
	// deciders are the placements whose PlacementDecisions name the cluster.
	deciders map[types.NamespacedName]struct{}
}

// affects reports whether the event can change the decisions or status of
// placement v, among the placements that may use one of the cluster's old
// or new sets. Only the clusters that pass a placement's predicates are
// ever ranked, spread, grouped or decided, so the event matters to a
// placement when its predicates may match the cluster before or after the
// event (label and claim selectors exactly, CEL expressions assumed true),
// or when it decides the cluster now; and then only if the change is one it
// reads (clusterChange.affects) or membership changed. A placement that
// selects nothing also reports whether its sets are empty
// (AllManagedClusterSetsEmpty rather than NoManagedClusterMatched), which any
// change of membership can flip.
func (ev clusterEvent) affects(v indexView) bool {
	if ev.membership && v.selectsNone {
		return true
	}
	if !ev.membership && !ev.change.affects(v.placement) {
		return false
	}
	if _, ok := ev.deciders[types.NamespacedName{Namespace: v.placement.Namespace, Name: v.placement.Name}]; ok {
		return true
	}
	return (ev.old != nil && v.filter.MayMatch(ev.old)) || (ev.cur != nil && v.filter.MayMatch(ev.cur))
}

// clusterChange is what changed in a ManagedCluster update, as far as
// scheduling is concerned.
type clusterChange struct {
	// all means every placement that may select the cluster is affected:
	// taints or deletion changed.
	all bool
	// labels, claims and allocatable report changes read only by the
	// placements configured to read them.
	labels, claims, allocatable bool
	// anything reports any change a CEL selector can read: the whole
	// cluster but its resourceVersion and managedFields.
	anything bool
}

// changeOf classifies the update of o to n.
func changeOf(o, n *clusterv1.ManagedCluster) clusterChange {
	return clusterChange{
		all: !equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
			o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero(),
		labels:      !equality.Semantic.DeepEqual(o.Labels, n.Labels),
		claims:      !equality.Semantic.DeepEqual(o.Status.ClusterClaims, n.Status.ClusterClaims),
		allocatable: !equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable),
		anything:    !equality.Semantic.DeepEqual(celVisible(o), celVisible(n)),
	}
}

// celVisible returns what a CEL selector can read of mc: everything but the
// fields every write changes.
func celVisible(mc *clusterv1.ManagedCluster) *clusterv1.ManagedCluster {
	out := mc.DeepCopy()
	out.ResourceVersion = ""
	out.ManagedFields = nil
	return out
}

// affects reports whether the change can alter p's decisions, given that
// the cluster's set membership did not change. A change of set membership,
// taints or deletion affects every placement that may select the cluster;
// labels matter only to label selectors, label topologies and decision
// groups by label; claims likewise; allocatable resources only to the
// ResourceAllocatable prioritizers; a CEL selector reads the whole cluster
// (status.version, annotations, conditions...), so any change affects it.
func (c clusterChange) affects(p *clusterv1beta1.Placement) bool {
	if c.all {
		return true
	}
	spec := &p.Spec
	for _, pred := range spec.Predicates {
		sel := &pred.RequiredClusterSelector
		if len(sel.CelSelector.CelExpressions) > 0 && c.anything {
			return true
		}
		if c.labels && !isEmptySelector(&sel.LabelSelector) {
			return true
		}
		if c.claims && len(sel.ClaimSelector.MatchExpressions) > 0 {
			return true
		}
	}
	for _, g := range spec.DecisionStrategy.GroupStrategy.DecisionGroups {
		if c.labels && !isEmptySelector(&g.ClusterSelector.LabelSelector) {
			return true
		}
		if c.claims && len(g.ClusterSelector.ClaimSelector.MatchExpressions) > 0 {
			return true
		}
	}
	for _, sc := range spec.SpreadPolicy.SpreadConstraints {
		if (c.labels && sc.TopologyKeyType != clusterv1beta1.TopologyKeyTypeClaim) ||
			(c.claims && sc.TopologyKeyType == clusterv1beta1.TopologyKeyTypeClaim) {
			return true
		}
	}
	if c.allocatable {
		for _, pc := range spec.PrioritizerPolicy.Configurations {
			if pc.ScoreCoordinate == nil || pc.ScoreCoordinate.Type == clusterv1beta1.ScoreCoordinateTypeAddOn {
				continue
			}
			switch pc.ScoreCoordinate.BuiltIn {
			case clusterv1beta1.PrioritizerResourceAllocatableCPU, clusterv1beta1.PrioritizerResourceAllocatableMemory:
				return true
			}
		}
	}
	return false
}

// isEmptySelector reports whether s selects every cluster.
func isEmptySelector(s *metav1.LabelSelector) bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}
