package rollout

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs.
const ControllerName = "addon-rollout"

// Reconciler sets the Progressing condition and the lastAppliedConfigs of
// one ManagedClusterAddOn.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// Reconcile follows the cluster-api skeleton without a finalizer: get,
// baseline, compute, one status patch when something changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Name}, cma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !addonv1alpha1.ManagedByAddonManager(cma.Annotations) {
		return ctrl.Result{}, nil
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(mca.Namespace), client.MatchingLabels{addonv1alpha1.AddonLabelKey: mca.Name}); err != nil {
		return ctrl.Result{}, err
	}
	if hosting := template.HostingCluster(mca); hosting != "" {
		// A hosted add-on's works on its hosting cluster roll out too.
		hosted := &workv1.ManifestWorkList{}
		if err := r.Client.List(ctx, hosted, client.InNamespace(hosting), client.MatchingLabels(template.HostingWorkLabels(mca.Name, mca.Namespace))); err != nil {
			return ctrl.Result{}, err
		}
		works.Items = append(works.Items, hosted.Items...)
	}
	h := patch.NewHelper(mca, r.Client)
	progress(mca, cma, deployWorks(mca.Name, works.Items))
	return patch.RetryStale(ctx, h.Patch(ctx, mca), apierrors.IsNotFound)
}
