package install

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs.
const ControllerName = "addon-install"

// Reconciler installs the add-on of one ClusterManagementAddOn: owner
// references on its ManagedClusterAddOns, the ManagedClusterAddOns of the
// Placements install strategy, and the add-on annotations of their
// ManagedClusters on them.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// Reconcile follows the cluster-api skeleton without a finalizer: the
// ManagedClusterAddOns of a deleted ClusterManagementAddOn are removed by
// the garbage collector, through their owner references.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, cma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cma.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	return patch.RetryStale(ctx, r.reconcileNormal(ctx, cma), apierrors.IsAlreadyExists)
}

// reconcileNormal owns, creates and deletes the add-on's ManagedClusterAddOns
// when the add-on manager manages the add-on, and gives them the add-on
// annotations of their clusters when its install strategy is not Manual.
func (r *Reconciler) reconcileNormal(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn) error {
	mcas, err := lookup.MCAsOf(ctx, r.Client, cma.Name)
	if err != nil {
		return err
	}
	var (
		a       actions
		targets map[string]target
	)
	if addonv1alpha1.ManagedByAddonManager(cma.Annotations) {
		decided, err := r.decided(ctx, cma)
		if err != nil {
			return err
		}
		if targets, err = r.targets(ctx, decided); err != nil {
			return err
		}
		a = plan(cma, mcas, decided, targets)
	}
	if err := r.update(ctx, cma, mcas, a); err != nil {
		return err
	}
	return r.install(ctx, cma, a, targets)
}

// update patches the ManagedClusterAddOns of cma that lack its owner
// reference (a.own) or, when syncsAnnotations, the add-on annotations of
// their ManagedCluster; one patch each, of what changed only. Those being
// deleted, or about to be (a.remove), are left alone.
func (r *Reconciler) update(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, mcas []addonv1alpha1.ManagedClusterAddOn, a actions) error {
	skip := map[*addonv1alpha1.ManagedClusterAddOn]bool{}
	for _, mca := range a.remove {
		skip[mca] = true
	}
	own := map[*addonv1alpha1.ManagedClusterAddOn]bool{}
	for _, mca := range a.own {
		own[mca] = true
	}
	for i := range mcas {
		mca := &mcas[i]
		if skip[mca] || !mca.DeletionTimestamp.IsZero() {
			continue
		}
		updated := mca.DeepCopy()
		if own[mca] {
			updated.OwnerReferences = append(updated.OwnerReferences, ownerRef(cma, false))
		}
		if syncsAnnotations(cma) {
			cluster := &clusterv1.ManagedCluster{}
			switch err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, cluster); {
			case err == nil:
				updated.Annotations = mergeClusterAnnotations(updated.Annotations, cluster.Annotations)
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("get ManagedCluster %s: %w", mca.Namespace, err)
			}
		}
		h := patch.NewHelper(mca, r.Client)
		changed, err := h.HasChanges(updated)
		if err != nil {
			return fmt.Errorf("compare ManagedClusterAddOn %s: %w", klog.KObj(mca), err)
		}
		if !changed {
			continue
		}
		if err := h.Patch(ctx, updated); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("patch the owner reference and cluster annotations of ManagedClusterAddOn %s: %w", klog.KObj(mca), err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Updated ManagedClusterAddOn", "cluster", mca.Namespace,
			"clusterAnnotations", updated.Annotations[addonv1alpha1.ClusterAnnotationsAnnotation])
	}
	return nil
}

// install creates and deletes ManagedClusterAddOns as a says; targets
// holds the ManagedCluster of every cluster to create one for.
func (r *Reconciler) install(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn, a actions, targets map[string]target) error {
	log := ctrl.LoggerFrom(ctx)
	for _, cluster := range a.create {
		if err := r.Client.Create(ctx, newMCA(cma, targets[cluster].cluster)); err != nil {
			return fmt.Errorf("create ManagedClusterAddOn %s/%s: %w", cluster, cma.Name, err)
		}
		log.V(2).Info("Installed add-on", "cluster", cluster)
	}
	for _, mca := range a.remove {
		// Only the version judged: one changed since the cache saw it (its
		// automatic installation disabled, say) is a conflict, and judged
		// again.
		err := r.Client.Delete(ctx, mca, client.Preconditions{UID: &mca.UID, ResourceVersion: &mca.ResourceVersion},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ManagedClusterAddOn %s: %w", klog.KObj(mca), err)
		}
		log.V(2).Info("Removed add-on from a cluster no placement decides", "cluster", mca.Namespace)
	}
	for cluster, why := range a.waiting {
		log.V(2).Info("Not installing the add-on yet", "cluster", cluster, "reason", why)
	}
	return nil
}

// decided returns the clusters the install strategy placements of cma
// decide; none unless its install strategy is Placements. A placement that
// does not exist decides nothing (the config controller reports it).
func (r *Reconciler) decided(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn) (map[string]bool, error) {
	out := map[string]bool{}
	if cma.Spec.InstallStrategy.Type != addonv1alpha1.InstallStrategyPlacements {
		return out, nil
	}
	for _, p := range cma.Spec.InstallStrategy.Placements {
		d, err := lookup.ReadDecisions(ctx, r.Client, p.PlacementRef)
		if err != nil {
			return nil, err
		}
		if !d.Found {
			ctrl.LoggerFrom(ctx).V(2).Info("Install placement not found, skipped", "placement", p.Namespace+"/"+p.Name)
		}
		for _, c := range d.Clusters() {
			out[c] = true
		}
	}
	return out, nil
}

// targets reads the ManagedCluster and namespace of every decided cluster
// from the cache.
func (r *Reconciler) targets(ctx context.Context, decided map[string]bool) (map[string]target, error) {
	out := make(map[string]target, len(decided))
	for name := range decided {
		var t target
		mc, ns := &clusterv1.ManagedCluster{}, &corev1.Namespace{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err == nil {
			t.cluster = mc
		} else if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get ManagedCluster %s: %w", name, err)
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns); err == nil {
			t.namespace = ns
		} else if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get namespace %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}
