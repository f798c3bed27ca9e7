package install

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// target is a cluster a ManagedClusterAddOn may be created for: its
// ManagedCluster and namespace as the cache holds them (nil when missing).
type target struct {
	cluster   *clusterv1.ManagedCluster
	namespace *corev1.Namespace
}

// actions are what one reconcile does to the ManagedClusterAddOns of an add-on.
type actions struct {
	// own are the ManagedClusterAddOns that lack an owner reference to the
	// ClusterManagementAddOn.
	own []*addonv1alpha1.ManagedClusterAddOn
	// create are the cluster namespaces to create a ManagedClusterAddOn in.
	create []string
	// remove are the ManagedClusterAddOns the controller created whose
	// cluster left every placement.
	remove []*addonv1alpha1.ManagedClusterAddOn
	// waiting are the decided clusters that get no ManagedClusterAddOn now,
	// with why.
	waiting map[string]string
}

// plan decides what to do for cma, given its ManagedClusterAddOns and, when
// its install strategy is Placements, the decided clusters. targets holds
// the ManagedCluster and namespace of every decided cluster.
func plan(cma *addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn, decided map[string]bool, targets map[string]target) actions {
	var a actions
	existing := map[string]bool{}
	for i := range mcas {
		mca := &mcas[i]
		existing[mca.Namespace] = true
		if !mca.DeletionTimestamp.IsZero() {
			continue
		}
		if !hasOwner(mca, cma.UID) {
			a.own = append(a.own, mca)
		}
		if cma.Spec.InstallStrategy.Type == addonv1alpha1.InstallStrategyPlacements && !decided[mca.Namespace] &&
			isController(mca, cma.UID) && mca.Annotations[addonv1alpha1.DisableAddonAutomaticInstallationAnnotationKey] != "true" {
			a.remove = append(a.remove, mca)
		}
	}
	if cma.Spec.InstallStrategy.Type != addonv1alpha1.InstallStrategyPlacements {
		return a
	}
	for cluster := range decided {
		if existing[cluster] {
			continue
		}
		if why := notInstallable(targets[cluster]); why != "" {
			if a.waiting == nil {
				a.waiting = map[string]string{}
			}
			a.waiting[cluster] = why
			continue
		}
		a.create = append(a.create, cluster)
	}
	sort.Strings(a.create)
	return a
}

// notInstallable says why no ManagedClusterAddOn may be created for t now,
// or "" when one may.
func notInstallable(t target) string {
	switch {
	case t.cluster == nil:
		return "the ManagedCluster does not exist"
	case !t.cluster.DeletionTimestamp.IsZero():
		return "the ManagedCluster is being deleted"
	case t.namespace == nil:
		return "the cluster namespace does not exist yet"
	case !t.namespace.DeletionTimestamp.IsZero() || t.namespace.Status.Phase == corev1.NamespaceTerminating:
		return "the cluster namespace is terminating"
	default:
		return ""
	}
}

// newMCA renders the ManagedClusterAddOn of cma in the namespace of
// cluster: controlled by cma, with the cluster's add-on annotations
// (mergeClusterAnnotations).
func newMCA(cma *addonv1alpha1.ClusterManagementAddOn, cluster *clusterv1.ManagedCluster) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{
		Name: cma.Name, Namespace: cluster.Name,
		OwnerReferences: []metav1.OwnerReference{ownerRef(cma, true)},
		Annotations:     mergeClusterAnnotations(nil, cluster.Annotations),
	}}
}

// ownerRef is an owner reference to cma, blocking its foreground deletion.
func ownerRef(cma *addonv1alpha1.ClusterManagementAddOn, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ClusterManagementAddOn",
		Name: cma.Name, UID: cma.UID,
		Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(true),
	}
}

// hasOwner reports whether mca has an owner reference to the object uid.
func hasOwner(mca *addonv1alpha1.ManagedClusterAddOn, uid types.UID) bool {
	for _, ref := range mca.OwnerReferences {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// isController reports whether the object uid is mca's controller: the
// controller created mca.
func isController(mca *addonv1alpha1.ManagedClusterAddOn, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(mca)
	return ref != nil && ref.UID == uid
}
