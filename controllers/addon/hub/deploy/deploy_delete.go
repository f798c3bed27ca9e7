package deploy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// reconcileDelete runs the pre-delete hook of a ManagedClusterAddOn being
// deleted that holds the hook finalizer, and drops the finalizer once the
// hook completed; then it deletes the hosting works of one that holds the
// hosting finalizer, and drops that finalizer once they are gone. Its other
// works and its RoleBindings go with it afterwards (owner references,
// deleteBindings).
func (r *Reconciler) reconcileDelete(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) error {
	hook := func() bool {
		return controllerutil.ContainsFinalizer(mca, addonv1alpha1.AddonPreDeleteHookFinalizer) ||
			controllerutil.ContainsFinalizer(mca, addonv1alpha1.AddonDeprecatedPreDeleteHookFinalizer)
	}
	if !hook() && !hasHostingFinalizer(mca) {
		return nil
	}
	h := patch.NewHelper(mca, r.Client)
	var err error
	if hook() {
		var done bool
		done, err = r.runHook(ctx, mca)
		if done {
			controllerutil.RemoveFinalizer(mca, addonv1alpha1.AddonPreDeleteHookFinalizer)
			controllerutil.RemoveFinalizer(mca, addonv1alpha1.AddonDeprecatedPreDeleteHookFinalizer)
		}
	}
	if err == nil && !hook() && hasHostingFinalizer(mca) {
		var existing []*workv1.ManifestWork
		if existing, err = r.listHostingWorks(ctx, mca); err == nil {
			err = r.cleanupHosting(ctx, mca, existing)
		}
	}
	if perr := h.Patch(ctx, mca); perr != nil && !apierrors.IsNotFound(perr) {
		return errors.Join(err, perr)
	}
	return err
}

// runHook applies the hook work and reports whether the hook is done: its
// Jobs and Pods completed, or it cannot run (the cluster is gone or being
// deleted, the template is gone or cannot be rendered, it has no hook).
func (r *Reconciler) runHook(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) (bool, error) {
	skip := func(why string) (bool, error) {
		r.Recorder.Eventf(mca, nil, corev1.EventTypeWarning, eventHookReleased, "PreDeleteHook",
			"the pre-delete hook of add-on %s does not run: %s", mca.Name, why)
		return true, nil
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return skip("the managed cluster is gone")
		}
		return false, err
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return skip("the managed cluster is being deleted")
	}
	src, err := r.load(ctx, mca, false)
	if err != nil {
		return false, err
	}
	if src.template == nil {
		return skip(src.waiting)
	}
	agent, err := template.Render(src.input(mca))
	if err != nil {
		return skip(err.Error())
	}
	spec := agent.HookWork()
	if spec == nil {
		return true, nil
	}
	works, err := r.listWorks(ctx, mca)
	if err != nil {
		return false, err
	}
	name := template.PreDeleteHookWorkName(mca.Name)
	labels := map[string]string{addonv1alpha1.AddonLabelKey: mca.Name, addonv1alpha1.AddonTemplateLabelKey: src.template.Name}
	w, err := r.writeWork(ctx, mca, works[name], client.ObjectKey{Namespace: mca.Namespace, Name: name}, spec, labels, nil)
	if err != nil {
		return false, err
	}
	if hookCompleted(w) {
		setCondition(mca, addonv1alpha1.ManagedClusterAddOnHookManifestCompleted, metav1.ConditionTrue,
			addonv1alpha1.HookManifestReasonCompleted, fmt.Sprintf("hook manifestWork %s is completed.", name))
		ctrl.LoggerFrom(ctx).V(2).Info("Pre-delete hook completed", "work", name)
		return true, nil
	}
	setCondition(mca, addonv1alpha1.ManagedClusterAddOnHookManifestCompleted, metav1.ConditionFalse,
		addonv1alpha1.HookManifestReasonNotCompleted, fmt.Sprintf("hook manifestWork %s is not completed.", name))
	return false, nil
}

// hookCompleted reports whether every Job of the hook work reports
// JobComplete True and every Pod PodPhase Succeeded, as OCM judges it; the
// work must be Available.
func hookCompleted(w *workv1.ManifestWork) bool {
	if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable) || len(w.Spec.ManifestConfigs) == 0 {
		return false
	}
	for _, mc := range w.Spec.ManifestConfigs {
		field, want := "", ""
		switch mc.ResourceIdentifier.Resource {
		case "jobs":
			field, want = "JobComplete", "True"
		case "pods":
			field, want = "PodPhase", "Succeeded"
		default:
			return false
		}
		if v := feedback(w, mc.ResourceIdentifier, field); v == nil || v.String == nil || *v.String != want {
			return false
		}
	}
	return true
}

// feedback returns the status feedback value name of the manifest id of w.
func feedback(w *workv1.ManifestWork, id workv1.ResourceIdentifier, name string) *workv1.FieldValue {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if !id.Matches(m.ResourceMeta) {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == name {
				return &v.Value
			}
		}
	}
	return nil
}
