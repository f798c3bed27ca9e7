package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// hostingFinalizers are the finalizer of the hosting works and its former name.
var hostingFinalizers = []string{addonv1alpha1.AddonHostingManifestFinalizer, addonv1alpha1.AddonDeprecatedHostingManifestFinalizer}

// listHostingWorks returns the hosting works of mca, in every namespace.
func (r *Reconciler) listHostingWorks(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) ([]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels(template.HostingWorkLabels(mca.Name, mca.Namespace))); err != nil {
		return nil, fmt.Errorf("list the hosting ManifestWorks of add-on %s of cluster %s: %w", mca.Name, mca.Namespace, err)
	}
	out := make([]*workv1.ManifestWork, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// reconcileHosting deploys the manifests of agent located on the hosting
// cluster of mca, as OCM's add-on framework does in Hosted mode:
//   - in Default mode (no hosting cluster), or when the hosting cluster is
//     not a managed cluster of the hub or is being deleted, the hosting
//     works are deleted and the finalizer
//     addon.open-cluster-management.io/hosting-manifests-cleanup goes once
//     they are gone; HostingClusterValidity says which;
//   - else the finalizer is added first (its patch brings the add-on back),
//     then the works addon-<addon>-deploy-hosting-<cluster>-<i> are written
//     in the hosting cluster's namespace, the other hosting works deleted,
//     and HostingManifestApplied set from theirs.
//
// The hosting works cannot be owned by mca (another namespace): the
// finalizer makes sure they go with it.
func (r *Reconciler) reconcileHosting(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, src *source, agent *template.Agent) error {
	existing, err := r.listHostingWorks(ctx, mca)
	if err != nil {
		return err
	}
	hosting := template.HostingCluster(mca)
	if hosting == "" {
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity)
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied)
		return r.cleanupHosting(ctx, mca, existing)
	}
	invalid, err := r.invalidHost(ctx, mca, hosting)
	if err != nil {
		return err
	}
	if invalid != "" {
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse, addonv1alpha1.HostingClusterValidityReasonInvalid, invalid)
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied)
		return r.cleanupHosting(ctx, mca, existing)
	}
	held, err := r.checkReportedHost(ctx, mca, hosting)
	if err != nil {
		return err
	}
	if held {
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied)
		return r.cleanupHosting(ctx, mca, existing)
	}

	specs, err := agent.HostingDeployWorks(r.sizeLimit())
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		meta.RemoveStatusCondition(&mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied)
		return r.cleanupHosting(ctx, mca, existing)
	}
	if !controllerutil.ContainsFinalizer(mca, addonv1alpha1.AddonHostingManifestFinalizer) {
		controllerutil.AddFinalizer(mca, addonv1alpha1.AddonHostingManifestFinalizer)
		return nil
	}
	byName := map[string]*workv1.ManifestWork{}
	for _, w := range existing {
		if w.Namespace == hosting {
			byName[w.Name] = w
		}
	}
	workLabels := template.HostingWorkLabels(mca.Name, mca.Namespace)
	workLabels[addonv1alpha1.AddonTemplateLabelKey] = src.template.Name
	annotations := map[string]string{workv1.ConfigSpecHashAnnotationKey: src.hashes.Annotation()}
	var written []*workv1.ManifestWork
	keep := map[client.ObjectKey]bool{}
	for i := range specs {
		name := template.HostingDeployWorkName(mca.Name, mca.Namespace, i)
		w, err := r.writeWork(ctx, mca, byName[name], client.ObjectKey{Namespace: hosting, Name: name}, &specs[i], workLabels, annotations)
		if err != nil {
			setCondition(mca, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, metav1.ConditionFalse,
				addonv1alpha1.ManifestAppliedReasonWorkApplyFailed, fmt.Sprintf("failed to apply the hosting manifestWork: %v", err))
			return err
		}
		written = append(written, w)
		keep[client.ObjectKeyFromObject(w)] = true
	}
	var errs []error
	for _, w := range existing {
		if !keep[client.ObjectKeyFromObject(w)] {
			errs = append(errs, r.deleteWork(ctx, w))
		}
	}
	setWorksApplied(mca, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, written)
	return errors.Join(errs...)
}

// invalidHost says why hosting cannot host mca's agent: it is not a
// managed cluster of the hub, it is being deleted, or it is mca's own
// cluster; "" when it can.
func (r *Reconciler) invalidHost(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, hosting string) (string, error) {
	cluster := &clusterv1.ManagedCluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: hosting}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("hosting cluster %s is not a managed cluster of the hub; the add-on's hosting manifests are deployed nowhere until it is", hosting), nil
	case err != nil:
		return "", fmt.Errorf("get hosting cluster %s: %w", hosting, err)
	case !cluster.DeletionTimestamp.IsZero():
		return fmt.Sprintf("hosting cluster %s is being deleted; the add-on's hosting manifests were removed", hosting), nil
	case hosting == mca.Namespace:
		return fmt.Sprintf("cluster %s cannot host its own add-on: name the cluster its Klusterlet runs on in annotation %s, or remove it for Default mode",
			hosting, addonv1alpha1.HostingClusterNameAnnotationKey), nil
	}
	return "", nil
}

// cleanupHosting deletes the hosting works of mca and drops the hosting
// finalizer once none is left.
func (r *Reconciler) cleanupHosting(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, existing []*workv1.ManifestWork) error {
	var errs []error
	for _, w := range existing {
		errs = append(errs, r.deleteWork(ctx, w))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(existing) == 0 {
		for _, f := range hostingFinalizers {
			controllerutil.RemoveFinalizer(mca, f)
		}
	}
	return nil
}

// hasHostingFinalizer reports whether mca holds the hosting finalizer.
func hasHostingFinalizer(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return slices.ContainsFunc(hostingFinalizers, func(f string) bool { return controllerutil.ContainsFinalizer(mca, f) })
}

// checkReportedHost sets HostingClusterValidity of mca, whose hosting
// cluster hosting is a managed cluster of the hub, against the hosting
// cluster its cluster's agent reports (ClusterClaim
// hosting-cluster.open-cluster-management.io), as OCM's add-on framework
// does: True when the agent reports none or the same; False
// (HostingClusterMismatch) when it reports another. A mismatched add-on
// whose hosting manifests were never deployed is held (it returns true); one
// already deployed keeps running where it is: the hub never moves it.
func (r *Reconciler) checkReportedHost(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, hosting string) (bool, error) {
	target := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, target); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("get ManagedCluster %s: %w", mca.Namespace, err)
	}
	reported := reportedHost(target)
	if reported == "" || reported == hosting {
		msg := fmt.Sprintf("hosting cluster %s is a managed cluster of the hub", hosting)
		if reported != "" {
			msg += fmt.Sprintf(", and cluster %s reports that its agent runs there", mca.Namespace)
		}
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionTrue, addonv1alpha1.HostingClusterValidityReasonValid, msg)
		return false, nil
	}
	msg := fmt.Sprintf("the add-on names hosting cluster %s, but cluster %s reports in ClusterClaim %s that its agent runs on %s",
		hosting, mca.Namespace, clusterv1alpha1.ClusterClaimHostingCluster, reported)
	if hasHostingFinalizer(mca) {
		msg += "; the add-on's agent keeps running on " + hosting + ": delete and recreate the add-on to move it"
	} else {
		msg += "; the add-on's hosting manifests are deployed nowhere until the two agree"
	}
	setCondition(mca, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse, addonv1alpha1.HostingClusterValidityReasonMismatch, msg)
	return !hasHostingFinalizer(mca), nil
}
