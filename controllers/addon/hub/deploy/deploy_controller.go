package deploy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs and events.
const ControllerName = "addon-deploy"

// Event reasons.
const (
	eventRenderFailed     = "RenderFailed"
	eventUnknownVariables = "UnknownVariables"
	eventPermissionFailed = "SetPermissionFailed"
	eventHookReleased     = "PreDeleteHookSkipped"
	eventBadRegistries    = addonv1alpha1.ImageRegistriesReasonInvalid
)

// Reconciler deploys the template add-ons of one ManagedClusterAddOn at a time.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Configs reads AddOnTemplates and AddOnDeploymentConfigs as
	// unstructured objects, from the manager's cache.
	Configs client.Reader
	// APIReader reads from the API server: a RoleBinding the cache does
	// not hold (it caches only RoleBindings labeled with a cluster name).
	APIReader client.Reader
	// Recorder records events on ManagedClusterAddOns.
	Recorder events.EventRecorder
	// SizeLimit is the largest total size of the manifests of one deploy
	// work; workv1.DefaultManifestsSizeLimit when zero.
	SizeLimit int
}

// Reconcile follows the cluster-api skeleton: get (a gone add-on has its
// RoleBindings in other namespaces removed), delete or deploy, one patch of
// the ManagedClusterAddOn at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.deleteBindings(ctx, req.Namespace, req.Name, nil)
		}
		return ctrl.Result{}, err
	}
	if !mca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, mca)
	}
	if templateRef(mca) == nil {
		return ctrl.Result{}, nil // not a template add-on
	}
	managed, err := lookup.Managed(ctx, r.Client, mca.Name)
	if err != nil || !managed {
		return ctrl.Result{}, err
	}
	h := patch.NewHelper(mca, r.Client)
	err = r.reconcileNormal(ctx, mca)
	if perr := h.Patch(ctx, mca); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	return ctrl.Result{}, err
}

// reconcileNormal renders the add-on from its desired configurations and
// writes its works, RoleBindings and status; it keeps the works as they
// are while the configurations are not at their desired spec hashes, and
// when the template cannot be rendered.
func (r *Reconciler) reconcileNormal(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) error {
	log := ctrl.LoggerFrom(ctx)
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Name}, cma); err != nil {
		return fmt.Errorf("get ClusterManagementAddOn %s: %w", mca.Name, err)
	}
	if waiting, err := r.discoverHosting(ctx, mca, cma); err != nil || waiting {
		return err
	}
	works, err := r.listWorks(ctx, mca)
	if err != nil {
		return err
	}
	src, err := r.load(ctx, mca, true)
	if err != nil {
		return err
	}
	if src.waiting != "" {
		log.V(2).Info("Keeping the add-on's works until its configurations reach their desired spec hashes", "reason", src.waiting)
		setManifestApplied(mca, deployWorks(works, mca.Name))
		return nil
	}
	agent, err := template.Render(src.input(mca))
	var specs []workv1.ManifestWorkSpec
	if err == nil {
		specs, err = agent.DeployWorks(r.sizeLimit())
	}
	if err != nil {
		msg := fmt.Sprintf("AddOnTemplate %s cannot be rendered for cluster %s; its ManifestWorks are left as they were: %v",
			src.template.Name, mca.Namespace, err)
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionFalse, addonv1alpha1.ManifestAppliedReasonRenderFailed, msg)
		r.Recorder.Eventf(mca, src.template, corev1.EventTypeWarning, eventRenderFailed, "Render", "%s", msg)
		return nil // a permanent user error: the template's next change brings the add-on back
	}
	if len(agent.UnknownVariables) > 0 {
		r.Recorder.Eventf(mca, src.template, corev1.EventTypeWarning, eventUnknownVariables, "Render",
			"AddOnTemplate %s uses variables no AddOnDeploymentConfig defines, rendered empty: %v", src.template.Name, agent.UnknownVariables)
	}

	r.recordImageRegistries(mca, src)
	r.recordPodSecurity(mca, src, agent)
	r.reconcileRegistration(ctx, mca, src.template)
	mca.Status.Namespace = agent.InstallNamespace
	mca.Status.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized
	setRelatedObjects(mca, src.template.Name)
	if agent.HookWork() != nil {
		controllerutil.AddFinalizer(mca, addonv1alpha1.AddonPreDeleteHookFinalizer)
	} else {
		controllerutil.RemoveFinalizer(mca, addonv1alpha1.AddonPreDeleteHookFinalizer)
	}

	written, err := r.writeDeployWorks(ctx, mca, src, specs, works)
	if err != nil {
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionFalse,
			addonv1alpha1.ManifestAppliedReasonWorkApplyFailed, fmt.Sprintf("failed to apply manifestWork: %v", err))
		return err
	}
	setManifestApplied(mca, written)
	return r.reconcileHosting(ctx, mca, src, agent)
}

// recordImageRegistries sets the ImageRegistries condition from the
// cluster's annotation open-cluster-management.io/image-registries: removed
// without it, True when its mirrors apply, False naming what is wrong when
// it is malformed (the agent is then rendered without it), with a Warning
// event when it turns False or its message changes.
func (r *Reconciler) recordImageRegistries(mca *addonv1alpha1.ManagedClusterAddOn, src *source) {
	typ := addonv1alpha1.ManagedClusterAddOnImageRegistries
	switch {
	case !src.hasRegistries:
		meta.RemoveStatusCondition(&mca.Status.Conditions, typ)
	case src.registriesErr == nil:
		setCondition(mca, typ, metav1.ConditionTrue, addonv1alpha1.ImageRegistriesReasonApplied,
			fmt.Sprintf("the %d image mirrors of ManagedCluster %s apply to the agent's images, after those of its AddOnDeploymentConfigs",
				len(src.clusterRegistries), mca.Namespace))
	default:
		msg := fmt.Sprintf("ManagedCluster %s: %v. The agent's images are rendered without the cluster's mirrors", mca.Namespace, src.registriesErr)
		was := previous(mca, typ)
		setCondition(mca, typ, metav1.ConditionFalse, addonv1alpha1.ImageRegistriesReasonInvalid, msg)
		if was.Status != metav1.ConditionFalse || was.Message != msg {
			if len(msg) > maxEventNote {
				msg = msg[:maxEventNote-3] + "..."
			}
			r.Recorder.Eventf(mca, src.template, corev1.EventTypeWarning, eventBadRegistries, "Render", "%s", msg)
		}
	}
}

// previous returns a copy of condition typ of mca, the zero condition when
// there is none: meta.SetStatusCondition changes the condition in place.
func previous(mca *addonv1alpha1.ManagedClusterAddOn, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(mca.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// sizeLimit returns the size limit of a deploy work.
func (r *Reconciler) sizeLimit() int {
	if r.SizeLimit > 0 {
		return r.SizeLimit
	}
	return workv1.DefaultManifestsSizeLimit
}

// setManifestApplied sets ManifestApplied from the Applied conditions of
// the deploy works.
func setManifestApplied(mca *addonv1alpha1.ManagedClusterAddOn, works []*workv1.ManifestWork) {
	setWorksApplied(mca, addonv1alpha1.ManagedClusterAddOnManifestApplied, works)
}

// setWorksApplied sets condition typ (ManifestApplied or
// HostingManifestApplied) from the Applied conditions of works, as OCM
// does: True when every work is applied, False when one is not; unchanged
// while one has not reported on its current spec yet, or when there is no
// work.
func setWorksApplied(mca *addonv1alpha1.ManagedClusterAddOn, typ string, works []*workv1.ManifestWork) {
	if len(works) == 0 {
		return
	}
	for _, w := range works {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
		if c == nil || c.ObservedGeneration != w.Generation {
			return
		}
		if c.Status != metav1.ConditionTrue {
			setCondition(mca, typ, metav1.ConditionFalse,
				addonv1alpha1.ManifestAppliedReasonManifestsApplyFailed, fmt.Sprintf("failed to apply the manifests of addon: work %s/%s: %s", w.Namespace, w.Name, c.Message))
			return
		}
	}
	setCondition(mca, typ, metav1.ConditionTrue,
		addonv1alpha1.ManifestAppliedReasonManifestsApplied, "manifests of addon are applied successfully")
}

// setCondition sets a condition of mca at its generation.
func setCondition(mca *addonv1alpha1.ManagedClusterAddOn, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: mca.Generation,
	})
}

// setRelatedObjects lists the ClusterManagementAddOn and the AddOnTemplate
// among the add-on's related objects, replacing a former template.
func setRelatedObjects(mca *addonv1alpha1.ManagedClusterAddOn, templateName string) {
	group := addonv1alpha1.GroupVersion.Group
	want := []addonv1alpha1.ObjectReference{
		{Group: group, Resource: "clustermanagementaddons", Name: mca.Name},
		{Group: group, Resource: addonv1alpha1.AddOnTemplateResource, Name: templateName},
	}
	var out []addonv1alpha1.ObjectReference
	for _, o := range mca.Status.RelatedObjects {
		if o.Group == group && o.Resource == addonv1alpha1.AddOnTemplateResource && o.Name != templateName {
			continue
		}
		out = append(out, o)
	}
	for _, w := range want {
		found := false
		for _, o := range out {
			found = found || o == w
		}
		if !found {
			out = append(out, w)
		}
	}
	mca.Status.RelatedObjects = out
}
