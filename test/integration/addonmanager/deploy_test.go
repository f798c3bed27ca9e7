package addonmanager

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// deploy plays the deploy controller and the work agent for the add-on on
// cluster: it renders the deploy work addon-<addon>-deploy-0 from the
// ManagedClusterAddOn's desired configurations (the config-spec-hash
// annotation, and a spec that changes with them, so the work's generation
// moves) and reports its Applied condition as applied at that generation.
// Like the deploy controller of a template add-on, it renders nothing before
// the add-on has desired configurations. It writes only what differs, so it
// can run on every poll.
func (s *suite) deploy(ctx context.Context, cluster string, applied metav1.ConditionStatus) error {
	m, err := s.mca(ctx, cluster)
	if err != nil {
		return err
	}
	if len(addonconfig.Desired(m)) == 0 {
		return nil
	}
	hashes := addonconfig.Desired(m).Annotation()
	w := &workv1.ManifestWork{}
	err = s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: template.DeployWorkName(addon, 0)}, w)
	switch {
	case apierrors.IsNotFound(err):
		w = &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster, Name: template.DeployWorkName(addon, 0),
			Labels: map[string]string{addonv1alpha1.AddonLabelKey: addon},
		}}
		render(w, hashes)
		if err := s.admin.Create(ctx, w); err != nil {
			return err
		}
	case err != nil:
		return err
	case w.Annotations[workv1.ConfigSpecHashAnnotationKey] != hashes:
		render(w, hashes)
		if err := s.admin.Update(ctx, w); err != nil {
			return err
		}
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c != nil && c.Status == applied && c.ObservedGeneration == w.Generation {
		return nil
	}
	reason, message := workv1.WorkAppliedReasonComplete, "Apply manifest work complete"
	if applied == metav1.ConditionFalse {
		reason, message = workv1.WorkAppliedReasonFailed, "Failed to apply manifest work"
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: workv1.WorkApplied, Status: applied, Reason: reason, Message: message, ObservedGeneration: w.Generation,
	})
	return s.admin.Status().Update(ctx, w)
}

// render sets the config-spec-hash annotation of w to hashes and its only
// manifest, a ConfigMap, to carry them.
func render(w *workv1.ManifestWork, hashes string) {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[workv1.ConfigSpecHashAnnotationKey] = hashes
	cm, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": addon + "-agent", "namespace": addonv1alpha1.DefaultAddonInstallNamespace},
		"data":     map[string]any{"config-spec-hash": hashes},
	})
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	w.Spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: cm}}}
}
