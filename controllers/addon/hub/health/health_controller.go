package health

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs and events.
const ControllerName = "addon-health"

// eventUnknown is the reason of the Event of an add-on made Unknown with its cluster.
const eventUnknown = "ManagedClusterAddOnStatusUpdated"

// Reconciler reports the health of the add-ons of one managed cluster at a
// time; its requests are named after the cluster.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on ManagedClusterAddOns.
	Recorder events.EventRecorder
}

// Reconcile updates the Available condition of the cluster's add-ons, then
// the cluster's add-on feature labels.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	mcas := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, mcas, client.InNamespace(cluster.Name)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the add-ons of cluster %s: %w", cluster.Name, err)
	}
	works, err := r.works(ctx, cluster.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for i := range mcas.Items {
		mca := &mcas.Items[i]
		if err := r.reconcileAddon(ctx, cluster, mca, works[mca.Name]); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := r.reconcileLabels(ctx, cluster, mcas.Items); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// works returns the add-on works in the cluster's namespace, by add-on.
func (r *Reconciler) works(ctx context.Context, cluster string) (map[string][]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster), client.HasLabels{addonv1alpha1.AddonLabelKey}); err != nil {
		return nil, fmt.Errorf("list the add-on ManifestWorks of cluster %s: %w", cluster, err)
	}
	out := map[string][]*workv1.ManifestWork{}
	for i := range list.Items {
		w := &list.Items[i]
		addon := w.Labels[addonv1alpha1.AddonLabelKey]
		out[addon] = append(out[addon], w)
	}
	return out, nil
}

// reconcileAddon sets the Available condition of one add-on: Unknown with
// the cluster when the cluster's availability is Unknown, else from the
// deploy works for a template add-on the hub deploys. Other add-ons are
// left to whoever reports their health.
func (r *Reconciler) reconcileAddon(ctx context.Context, cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn,
	works []*workv1.ManifestWork) error {
	var want *metav1.Condition
	clusterAvailable := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	unknown := clusterAvailable != nil && clusterAvailable.Status == metav1.ConditionUnknown
	switch {
	case unknown:
		want = &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionUnknown,
			Reason: clusterAvailable.Reason, Message: clusterAvailable.Message}
	case isTemplateAddon(mca):
		managed, err := lookup.Managed(ctx, r.Client, mca.Name)
		if err != nil || !managed {
			return err
		}
		hosting, err := r.hostingWorks(ctx, mca)
		if err != nil {
			return err
		}
		want = probe(mca, works, hosting)
	}
	if want == nil {
		return nil
	}
	if c := meta.FindStatusCondition(mca.Status.Conditions, want.Type); c != nil &&
		c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
		return nil
	}
	h := patch.NewHelper(mca, r.Client)
	want.ObservedGeneration = mca.Generation
	meta.SetStatusCondition(&mca.Status.Conditions, *want)
	if err := h.Patch(ctx, mca); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Add-on availability changed", "addon", mca.Name, "status", want.Status, "reason", want.Reason)
	if unknown {
		r.Recorder.Eventf(mca, cluster, corev1.EventTypeWarning, eventUnknown, "CheckCluster",
			"update addon %q status to unknown on managed cluster %q", mca.Name, cluster.Name)
	}
	return nil
}

// hostingWorks returns, for a hosted add-on, its deploy works in its
// hosting cluster's namespace (only there: a work elsewhere with the same
// labels is not the hub's), in index order; none in Default mode.
func (r *Reconciler) hostingWorks(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) ([]*workv1.ManifestWork, error) {
	hosting := template.HostingCluster(mca)
	if hosting == "" {
		return nil, nil
	}
	list := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, list, client.InNamespace(hosting), client.MatchingLabels(template.HostingWorkLabels(mca.Name, mca.Namespace))); err != nil {
		return nil, fmt.Errorf("list the hosting ManifestWorks of add-on %s of cluster %s: %w", mca.Name, mca.Namespace, err)
	}
	var out []*workv1.ManifestWork
	for i := range list.Items {
		if _, ok := template.HostingDeployWorkIndex(mca.Name, mca.Namespace, list.Items[i].Name); ok {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *workv1.ManifestWork) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// isTemplateAddon reports whether mca's desired configurations include an
// AddOnTemplate.
func isTemplateAddon(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.IsTemplateConfig() && ref.DesiredConfig != nil {
			return true
		}
	}
	return false
}

// reconcileLabels sets the feature label of each add-on of the cluster and
// removes those of add-ons that are gone or being deleted, as OCM does; a
// cluster being deleted, or without an Available condition yet, is left alone.
func (r *Reconciler) reconcileLabels(ctx context.Context, cluster *clusterv1.ManagedCluster, mcas []addonv1alpha1.ManagedClusterAddOn) error {
	if !cluster.DeletionTimestamp.IsZero() || meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) == nil {
		return nil
	}
	want := map[string]string{}
	for i := range mcas {
		if mcas[i].DeletionTimestamp.IsZero() {
			want[clusterv1.AddOnFeatureLabelKeyPrefix+mcas[i].Name] = featureValue(&mcas[i])
		}
	}
	updated := cluster.DeepCopy()
	for k := range updated.Labels {
		if _, ok := want[k]; strings.HasPrefix(k, clusterv1.AddOnFeatureLabelKeyPrefix) && !ok {
			delete(updated.Labels, k)
		}
	}
	for k, v := range want {
		if updated.Labels == nil {
			updated.Labels = map[string]string{}
		}
		updated.Labels[k] = v
	}
	if err := patch.NewHelper(cluster, r.Client).Patch(ctx, updated); err != nil {
		return fmt.Errorf("update the add-on feature labels of cluster %s: %w", cluster.Name, err)
	}
	return nil
}

// featureValue is the feature label value of an add-on: available when
// Available is True, unhealthy when False, unreachable otherwise.
func featureValue(mca *addonv1alpha1.ManagedClusterAddOn) string {
	c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
	switch {
	case c == nil:
		return clusterv1.AddOnFeatureLabelValueUnreachable
	case c.Status == metav1.ConditionTrue:
		return clusterv1.AddOnFeatureLabelValueAvailable
	case c.Status == metav1.ConditionFalse:
		return clusterv1.AddOnFeatureLabelValueUnhealthy
	default:
		return clusterv1.AddOnFeatureLabelValueUnreachable
	}
}
