package config

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs and events.
const ControllerName = "addon-config"

// unreadableRetry is how soon an add-on with a configuration of a kind the
// hub controller cannot watch is looked at again.
const unreadableRetry = time.Minute

// Reconciler resolves, hashes and rolls out the configurations of the
// add-on of one ClusterManagementAddOn.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads configuration objects of kinds other than
	// AddOnDeploymentConfig and AddOnTemplate.
	APIReader client.Reader
	// Recorder records events on ClusterManagementAddOns.
	Recorder events.EventRecorder
	// Now returns the current time; time.Now when nil.
	Now func() time.Time

	// kinds starts metadata watches of configuration kinds on demand.
	kinds *kindWatches
}

// Reconcile follows the cluster-api skeleton without a finalizer: get,
// baseline, reconcile, one status patch of the ClusterManagementAddOn.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, cma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cma.DeletionTimestamp.IsZero() || !addonv1alpha1.ManagedByAddonManager(cma.Annotations) {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cma, r.Client)
	before := cma.DeepCopy()
	res, err := r.reconcileNormal(ctx, cma)
	if err == nil {
		err = h.Patch(ctx, cma)
	}
	if err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	r.recordMissingPlacements(before, cma)
	return res, nil
}

// reconcileNormal reads what the plan needs, writes every
// ManagedClusterAddOn's status and fills in cma's.
func (r *Reconciler) reconcileNormal(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn) (ctrl.Result, error) {
	in, unwatched, err := r.input(ctx, cma)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := makePlan(in)
	for _, cp := range p.clusters {
		if !cp.mca.DeletionTimestamp.IsZero() {
			continue
		}
		h := patch.NewHelper(cp.mca, r.Client)
		mca := cp.mca.DeepCopy()
		writeMCAStatus(mca, cma, cp, in.objects)
		if err := h.Patch(ctx, mca); err != nil {
			return ctrl.Result{}, err
		}
		if cp.allowed {
			ctrl.LoggerFrom(ctx).V(2).Info("Rolled out configurations", "cluster", mca.Namespace, "configurations", addonconfig.Desired(mca))
		}
	}
	writeCMAStatus(cma, p, in.objects)
	res := ctrl.Result{RequeueAfter: p.requeueAfter}
	if unwatched && (res.RequeueAfter == 0 || res.RequeueAfter > unreadableRetry) {
		res.RequeueAfter = unreadableRetry
	}
	return res, nil
}

// input reads the add-on's placements, ManagedClusterAddOns, clusters and
// configuration objects. unwatched reports a configuration the controller
// is not told about when it changes (a kind the hub does not serve or the
// controller may not read), to be read again later.
func (r *Reconciler) input(ctx context.Context, cma *addonv1alpha1.ClusterManagementAddOn) (in input, unwatched bool, err error) {
	in = input{cma: cma, objects: map[addonconfig.Key]object{}, available: map[string]bool{}, now: r.now()}
	for _, p := range cma.Spec.InstallStrategy.Placements {
		d, err := lookup.ReadDecisions(ctx, r.Client, p.PlacementRef)
		if err != nil {
			return in, false, err
		}
		in.decisions = append(in.decisions, d)
	}
	if in.mcas, err = lookup.MCAsOf(ctx, r.Client, cma.Name); err != nil {
		return in, false, err
	}
	rd := &reader{cache: r.Client, live: r.APIReader, mapper: r.Client.RESTMapper(), watch: r.kinds.watch}
	var refs []addonv1alpha1.AddOnConfig
	for _, sc := range cma.Spec.SupportedConfigs {
		if sc.DefaultConfig != nil {
			refs = append(refs, addonv1alpha1.AddOnConfig{ConfigGroupResource: sc.ConfigGroupResource, ConfigReferent: *sc.DefaultConfig})
		}
	}
	for _, p := range cma.Spec.InstallStrategy.Placements {
		refs = append(refs, p.Configs...)
	}
	for i := range in.mcas {
		mca := &in.mcas[i]
		refs = append(refs, mca.Spec.Configs...)
		mc := &clusterv1.ManagedCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, mc); client.IgnoreNotFound(err) != nil {
			return in, false, fmt.Errorf("get ManagedCluster %s: %w", mca.Namespace, err)
		} else if err == nil {
			in.available[mca.Namespace] = meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}
	}
	for _, ref := range refs {
		o, err := rd.get(ctx, addonconfig.KeyOf(ref))
		if err != nil {
			return in, false, err
		}
		in.objects[addonconfig.KeyOf(ref)] = o
		unwatched = unwatched || o.unwatched
	}
	return in, unwatched, nil
}

// now returns the current time.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// recordMissingPlacements records a Warning event for each install
// placement that became missing in this reconcile.
func (r *Reconciler) recordMissingPlacements(before, after *addonv1alpha1.ClusterManagementAddOn) {
	was := map[addonv1alpha1.PlacementRef]bool{}
	for _, ip := range before.Status.InstallProgressions {
		if c := meta.FindStatusCondition(ip.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil && c.Reason == ReasonPlacementNotFound {
			was[ip.PlacementRef] = true
		}
	}
	for _, ip := range after.Status.InstallProgressions {
		c := meta.FindStatusCondition(ip.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
		if c != nil && c.Reason == ReasonPlacementNotFound && !was[ip.PlacementRef] {
			r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, ReasonPlacementNotFound, "Install", "%s", c.Message)
		}
	}
}
