package manager

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// deploy writes the add-on's deploy ManifestWork and what addon-framework's
// deploy controller writes on a ManagedClusterAddOn: ManifestApplied,
// status.healthCheck.mode and Available.
type deploy struct {
	client client.Client
	opts   Options
}

// setup watches the add-on's ManagedClusterAddOns and their works.
func (d *deploy) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(d.opts.AddonName+"-deploy").
		For(&addonv1beta1.ManagedClusterAddOn{}, builder.WithPredicates(named(d.opts.AddonName))).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.GetLabels()[addonv1alpha1.AddonLabelKey] != d.opts.AddonName {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: d.opts.AddonName}}}
		})).
		Complete(d)
}

// Reconcile deploys the agent once the registration is configured, then
// reports its manifests and its health in one status patch.
func (d *deploy) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1beta1.ManagedClusterAddOn{}
	if err := d.client.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mca.DeletionTimestamp.IsZero() || !conditionSet(mca, addonv1alpha1.ManagedClusterAddOnRegistrationApplied) {
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := d.client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	updated := mca.DeepCopy()
	work, applyErr := d.applyWork(ctx, mca)
	setManifestApplied(updated, work, applyErr)
	updated.Status.HealthCheck.Mode = addonv1beta1.HealthCheckModeCustomized
	if work != nil && conditionSet(updated, addonv1alpha1.ManagedClusterAddOnManifestApplied) {
		probe(updated, cluster, work)
	}
	_, err := patchStatus(ctx, d.client, mca, updated, mca.Status, updated.Status)
	return ctrl.Result{}, firstError(applyErr, wrap(err, "patch the deploy status"))
}

// applyWork creates the add-on's deploy work, or updates it when its spec,
// labels or annotations differ, and returns the work as the hub holds it.
func (d *deploy) applyWork(ctx context.Context, mca *addonv1beta1.ManagedClusterAddOn) (*workv1.ManifestWork, error) {
	want, err := d.deployWork(ctx, mca)
	if err != nil {
		return nil, err
	}
	current := &workv1.ManifestWork{}
	err = d.client.Get(ctx, client.ObjectKeyFromObject(want), current)
	switch {
	case apierrors.IsNotFound(err):
		return want, d.client.Create(ctx, want)
	case err != nil:
		return nil, err
	case equality.Semantic.DeepEqual(current.Spec, want.Spec) && equality.Semantic.DeepEqual(current.Labels, want.Labels) &&
		equality.Semantic.DeepEqual(current.Annotations, want.Annotations):
		return current, nil
	}
	updated := current.DeepCopy()
	updated.Spec, updated.Labels, updated.Annotations, updated.OwnerReferences = want.Spec, want.Labels, want.Annotations, want.OwnerReferences
	return updated, d.client.Update(ctx, updated)
}

// deployWork renders addon-<name>-deploy-0 for mca: the agent's manifests,
// the add-on label, mca as controller, the spec hashes of the desired
// configurations (open-cluster-management.io/config-spec-hash), the
// Deployment's status feedback and the install namespace left in place on
// removal.
func (d *deploy) deployWork(ctx context.Context, mca *addonv1beta1.ManagedClusterAddOn) (*workv1.ManifestWork, error) {
	ns, err := agentNamespace(ctx, d.client, mca)
	if err != nil {
		return nil, err
	}
	objects := agentObjects(d.opts, mca.Namespace, ns)
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
		Namespace: mca.Namespace, Name: "addon-" + d.opts.AddonName + "-deploy-0",
		Labels: map[string]string{addonv1alpha1.AddonLabelKey: d.opts.AddonName},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mca,
			addonv1beta1.GroupVersion.WithKind("ManagedClusterAddOn"))},
	}}
	if hashes := configHashes(mca); len(hashes) > 0 {
		data, err := json.Marshal(hashes)
		if err != nil {
			return nil, err
		}
		work.Annotations = map[string]string{workv1.ConfigSpecHashAnnotationKey: string(data)}
	}
	for _, obj := range objects {
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	work.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: ns, Name: agentName(d.opts)},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
	}}
	work.Spec.DeleteOption = &workv1.DeleteOption{
		PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "namespaces", Name: ns}}},
	}
	return work, nil
}

// configHashes maps each desired configuration of mca
// (<resource>.<group>/<namespace>/<name>) to its spec hash, as
// addon-framework annotates its works.
func configHashes(mca *addonv1beta1.ManagedClusterAddOn) map[string]string {
	out := map[string]string{}
	for _, ref := range mca.Status.ConfigReferences {
		if ref.DesiredConfig == nil {
			continue
		}
		gr := ref.Resource
		if ref.Group != "" {
			gr += "." + ref.Group
		}
		out[gr+"/"+ref.DesiredConfig.Namespace+"/"+ref.DesiredConfig.Name] = ref.DesiredConfig.SpecHash
	}
	return out
}

// setManifestApplied sets ManifestApplied from the work's Applied
// condition, as addon-framework does: left alone (a False one removed)
// until the work agent reports.
func setManifestApplied(mca *addonv1beta1.ManagedClusterAddOn, work *workv1.ManifestWork, applyErr error) {
	conds := &mca.Status.Conditions
	typ := addonv1alpha1.ManagedClusterAddOnManifestApplied
	if applyErr != nil {
		setCondition(conds, typ, metav1.ConditionFalse, addonv1alpha1.ManifestAppliedReasonWorkApplyFailed,
			fmt.Sprintf("failed to apply manifestWork: %v", applyErr))
		return
	}
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	switch {
	case applied == nil:
		if c := meta.FindStatusCondition(*conds, typ); c != nil && c.Status == metav1.ConditionFalse {
			meta.RemoveStatusCondition(conds, typ)
		}
	case applied.Status == metav1.ConditionTrue:
		setCondition(conds, typ, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied, "manifests of addon are applied successfully")
	default:
		setCondition(conds, typ, metav1.ConditionFalse, addonv1alpha1.ManifestAppliedReasonManifestsApplyFailed, "failed to apply the manifests of addon")
	}
}

// probe sets Available as addon-framework's DeploymentAvailability health
// prober does: from the work's Available condition, then from the agent
// Deployment's ready replicas in the work's status feedback. A cluster
// whose availability is Unknown is left to the hub.
func probe(mca *addonv1beta1.ManagedClusterAddOn, cluster *clusterv1.ManagedCluster, work *workv1.ManifestWork) {
	if c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil && c.Status == metav1.ConditionUnknown {
		return
	}
	conds := &mca.Status.Conditions
	typ := addonv1alpha1.ManagedClusterAddOnConditionAvailable
	available := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkAvailable)
	switch {
	case available == nil:
		setCondition(conds, typ, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonWorkNotApplied, "Addon manifestWork is not applied yet")
		return
	case available.Status == metav1.ConditionFalse:
		setCondition(conds, typ, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonWorkNotApplied, available.Message)
		return
	}
	ready, found := readyReplicas(work)
	switch {
	case !found:
		setCondition(conds, typ, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonNoProbeResult, "Probe results are not returned")
	case ready < 1:
		setCondition(conds, typ, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonProbeUnavailable,
			"Probe addon unavailable with err readyReplicas is 0")
	default:
		setCondition(conds, typ, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonProbeAvailable, mca.Name+" add-on is available.")
	}
}

// readyReplicas reads ReadyReplicas of the Deployment of the work's status
// feedback; found is false until the work agent reports it.
func readyReplicas(work *workv1.ManifestWork) (int64, bool) {
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource != "deployments" {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == "ReadyReplicas" && v.Value.Integer != nil {
				return *v.Value.Integer, true
			}
		}
	}
	return 0, false
}
