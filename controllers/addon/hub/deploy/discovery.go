package deploy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// reportedHost returns the hosting cluster mc's agent reports in its
// ClusterClaim hosting-cluster.open-cluster-management.io, "" when none. An
// agent writes the status of its own ManagedCluster only, so the value is
// that cluster's own statement, never another cluster's.
func reportedHost(mc *clusterv1.ManagedCluster) string {
	for _, c := range mc.Status.ClusterClaims {
		if c.Name == clusterv1alpha1.ClusterClaimHostingCluster {
			return c.Value
		}
	}
	return ""
}

// wantsDiscovery reports whether mca asks for Hosted mode without naming
// its hosting cluster.
func wantsDiscovery(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return mca.Annotations[addonv1alpha1.InstallModeAnnotationKey] == addonv1alpha1.InstallModeHosted &&
		template.HostingCluster(mca) == ""
}

// discoverHosting fills in the hosting cluster of an add-on that asks for
// Hosted mode (annotation addon.open-cluster-management.io/install-mode:
// Hosted) without naming one, when its ClusterManagementAddOn cma enables
// spec.hostedModeAutoDiscovery, as OCM's add-on framework does (KEP-188):
// once, from the ClusterClaim its own cluster's agent reports, and only
// for a hosting cluster that is another accepted managed cluster sharing a
// ManagedClusterSet other than default and global with the add-on's
// cluster. Both conditions are the hub administrator's: the opt-in on the
// ClusterManagementAddOn, and the set, which a cluster joins only by a user
// with managedclustersets/join on it (admission policy
// managedcluster-clusterset.open-cluster-management.io); an agent can
// change neither. It returns true when the add-on waits: it then has
// HostingClusterValidity False (HostingClusterAutoDiscoveryPending) and
// nothing is deployed, in Default mode or elsewhere.
//
// It also removes a discovered hosting cluster (and its mark) once the
// add-on no longer asks for Hosted mode.
func (r *Reconciler) discoverHosting(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn) (bool, error) {
	ann := mca.Annotations
	if ann[addonv1alpha1.InstallModeAnnotationKey] != addonv1alpha1.InstallModeHosted &&
		ann[addonv1alpha1.HostingClusterNameManagedByAnnotationKey] == addonv1alpha1.HostingClusterNameManagedByAutoDiscoveryValue {
		delete(mca.Annotations, addonv1alpha1.HostingClusterNameAnnotationKey)
		delete(mca.Annotations, addonv1alpha1.HostingClusterNameManagedByAnnotationKey)
		return false, nil
	}
	if !wantsDiscovery(mca) || !cma.Spec.AutoDiscoveryEnabled() {
		return false, nil
	}
	host, pending, err := r.discoverableHost(ctx, mca.Namespace)
	if err != nil {
		return false, err
	}
	if pending != "" {
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse,
			addonv1alpha1.HostingClusterValidityReasonAutoDiscoveryPending, pending)
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied)
		return true, nil
	}
	mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] = host
	mca.Annotations[addonv1alpha1.HostingClusterNameManagedByAnnotationKey] = addonv1alpha1.HostingClusterNameManagedByAutoDiscoveryValue
	return false, nil
}

// discoverableHost returns the hosting cluster cluster's agent reports, or
// why it cannot host cluster's add-ons (pending).
func (r *Reconciler) discoverableHost(ctx context.Context, cluster string) (host, pending string, err error) {
	target := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, target); err != nil {
		return "", "", fmt.Errorf("get ManagedCluster %s: %w", cluster, err)
	}
	host = reportedHost(target)
	if host == "" {
		return "", fmt.Sprintf("waiting for cluster %s to report its hosting cluster in ClusterClaim %s: set spec.deployOption.reportHostingCluster: Enable on its Klusterlet",
			cluster, clusterv1alpha1.ClusterClaimHostingCluster), nil
	}
	if host == cluster {
		return "", fmt.Sprintf("cluster %s reports that its agent runs on itself: a cluster cannot host its own add-ons", cluster), nil
	}
	hosting := &clusterv1.ManagedCluster{}
	err = r.Client.Get(ctx, client.ObjectKey{Name: host}, hosting)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Sprintf("cluster %s reports hosting cluster %s, which is not a managed cluster of the hub", cluster, host), nil
	case err != nil:
		return "", "", fmt.Errorf("get ManagedCluster %s: %w", host, err)
	case !hosting.DeletionTimestamp.IsZero() || !hosting.Spec.HubAcceptsClient:
		return "", fmt.Sprintf("cluster %s reports hosting cluster %s, which is not an accepted managed cluster", cluster, host), nil
	}
	shared, err := r.sharedSet(ctx, target, hosting)
	if err != nil {
		return "", "", err
	}
	if shared == "" {
		return "", fmt.Sprintf("cluster %s reports hosting cluster %s, but no ManagedClusterSet other than %s and %s holds both: add both to one set to host the add-on there",
			cluster, host, clusterv1beta2.DefaultClusterSetName, clusterv1beta2.GlobalClusterSetName), nil
	}
	return host, "", nil
}

// sharedSet returns the name of a ManagedClusterSet, other than default and
// global, whose members include both a and b; "" when there is none.
func (r *Reconciler) sharedSet(ctx context.Context, a, b *clusterv1.ManagedCluster) (string, error) {
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets); err != nil {
		return "", fmt.Errorf("list ManagedClusterSets: %w", err)
	}
	for i := range sets.Items {
		s := &sets.Items[i]
		if s.Name == clusterv1beta2.DefaultClusterSetName || s.Name == clusterv1beta2.GlobalClusterSetName || !s.DeletionTimestamp.IsZero() {
			continue
		}
		sel, err := s.Spec.ClusterSelector.Selector(s.Name)
		if err != nil {
			continue // a set with an invalid selector has no members
		}
		if sel.Matches(labels.Set(a.Labels)) && sel.Matches(labels.Set(b.Labels)) {
			return s.Name, nil
		}
	}
	return "", nil
}
