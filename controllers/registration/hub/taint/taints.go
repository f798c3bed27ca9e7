package taint

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// Desired returns taints with the hub-managed taints set for a cluster whose
// ManagedClusterConditionAvailable status is available: Unknown (or missing)
// adds unreachable, False adds unavailable, True adds neither; the other
// hub-managed taint is removed. A taint that is already present keeps its
// timeAdded; a new one is stamped with now. Other taints are kept as they are.
func Desired(taints []clusterv1.Taint, available metav1.ConditionStatus, now metav1.Time) []clusterv1.Taint {
	want := ""
	switch available {
	case metav1.ConditionFalse:
		want = clusterv1.ManagedClusterTaintUnavailable
	case metav1.ConditionTrue:
	default:
		want = clusterv1.ManagedClusterTaintUnreachable
	}
	out := slices.DeleteFunc(slices.Clone(taints), func(t clusterv1.Taint) bool {
		return hubManaged(t.Key) && t.Key != want
	})
	if want != "" && !slices.ContainsFunc(out, func(t clusterv1.Taint) bool { return t.Key == want }) {
		out = append(out, clusterv1.Taint{Key: want, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: now})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hubManaged reports whether the hub owns taints with key.
func hubManaged(key string) bool {
	return key == clusterv1.ManagedClusterTaintUnavailable || key == clusterv1.ManagedClusterTaintUnreachable
}
