package sigdecision

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
)

// SchedulerName is the spec of every mirror's schedulerName and the value
// of its x-k8s.io/cluster-manager label, by which the hub knows the mirrors
// it writes (and ClusterProfiles name the same cluster manager).
const SchedulerName = "open-cluster-management"

// managedLabels are the label keys the hub sets on a mirror; it removes
// those its source no longer gives and leaves every other label alone.
var managedLabels = []string{
	multiclusterv1alpha1.LabelClusterManagerKey,
	multiclusterv1alpha1.PlacementKeyLabel,
	multiclusterv1alpha1.DecisionKeyLabel,
	multiclusterv1alpha1.DecisionIndexLabel,
	clusterv1beta1.DecisionGroupIndexLabel,
	clusterv1beta1.DecisionGroupNameLabel,
}

// IsManaged reports whether the hub writes pd: its x-k8s.io/cluster-manager
// label names SchedulerName. Another scheduler's PlacementDecision is never
// changed.
func IsManaged(pd *multiclusterv1alpha1.PlacementDecision) bool {
	return pd.Labels[multiclusterv1alpha1.LabelClusterManagerKey] == SchedulerName
}

// Mirror returns the PlacementDecision of KEP-5313 that mirrors src: same
// name and namespace, Labels(src), a controller owner reference to src, and
// one decision per cluster of src, in src's order, referring to the
// cluster's ClusterProfile in src's namespace (where the hub exports the
// profiles of the clusters a Placement there may choose) with src's reason.
func Mirror(src *clusterv1beta1.PlacementDecision) *multiclusterv1alpha1.PlacementDecision {
	pd := &multiclusterv1alpha1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       src.Namespace,
			Name:            src.Name,
			Labels:          Labels(src),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(src, clusterv1beta1.GroupVersion.WithKind("PlacementDecision"))},
		},
		Decisions:     make([]multiclusterv1alpha1.ClusterDecision, 0, len(src.Status.Decisions)),
		SchedulerName: SchedulerName,
	}
	for _, d := range src.Status.Decisions {
		pd.Decisions = append(pd.Decisions, multiclusterv1alpha1.ClusterDecision{
			ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: d.ClusterName, Namespace: src.Namespace},
			Reason:            d.Reason,
		})
	}
	return pd
}

// Labels returns the labels of the mirror of src:
//
//   - x-k8s.io/cluster-manager: SchedulerName;
//   - multicluster.x-k8s.io/placement-key and decision-key: the name of
//     src's Placement (its cluster.open-cluster-management.io/placement
//     label), shared by every slice of the Placement's decision;
//   - multicluster.x-k8s.io/decision-index: the slice's position from 0,
//     n-1 for a source named <placement>-decision-<n> as the scheduler names
//     them, absent for a source named otherwise;
//   - the decision group's cluster.open-cluster-management.io/decision-group-index
//     and decision-group-name, copied when the index is a number from 0.
func Labels(src *clusterv1beta1.PlacementDecision) map[string]string {
	labels := map[string]string{multiclusterv1alpha1.LabelClusterManagerKey: SchedulerName}
	placement, ok := src.Labels[clusterv1beta1.PlacementLabel]
	if ok && placement != "" {
		labels[multiclusterv1alpha1.PlacementKeyLabel] = placement
		labels[multiclusterv1alpha1.DecisionKeyLabel] = placement
		if i, ok := sliceIndex(placement, src.Name); ok {
			labels[multiclusterv1alpha1.DecisionIndexLabel] = strconv.Itoa(i)
		}
	}
	if g, err := strconv.Atoi(src.Labels[clusterv1beta1.DecisionGroupIndexLabel]); err == nil && g >= 0 {
		labels[clusterv1beta1.DecisionGroupIndexLabel] = strconv.Itoa(g)
		labels[clusterv1beta1.DecisionGroupNameLabel] = src.Labels[clusterv1beta1.DecisionGroupNameLabel]
	}
	return labels
}

// sliceIndex returns n-1 when name is <placement>-decision-<n> with n from
// 1 written without leading zeros (clusterv1beta1.PlacementDecisionName).
func sliceIndex(placement, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, placement+"-decision-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n - 1, true
}

// Update makes cur what want says, in place: the labels in managedLabels
// (other labels are kept), the controller owner reference (other owners
// are kept), the decisions and the scheduler name.
func Update(cur, want *multiclusterv1alpha1.PlacementDecision) {
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	for _, k := range managedLabels {
		if v, ok := want.Labels[k]; ok {
			cur.Labels[k] = v
		} else {
			delete(cur.Labels, k)
		}
	}
	owners := make([]metav1.OwnerReference, 0, len(cur.OwnerReferences)+len(want.OwnerReferences))
	for _, o := range cur.OwnerReferences {
		if o.Controller == nil || !*o.Controller {
			owners = append(owners, o)
		}
	}
	cur.OwnerReferences = append(owners, want.OwnerReferences...)
	cur.Decisions = want.Decisions
	cur.SchedulerName = want.SchedulerName
}
