package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// probe computes the Available condition of a template add-on from its
// deploy works among works and, in Hosted mode, its deploy works on its
// hosting cluster, as OCM's DeploymentAvailability health check does. It
// returns nil while the add-on's manifests were never applied (no
// ManifestApplied or, in Hosted mode, HostingManifestApplied condition):
// there is nothing to judge yet. A hosted add-on whose hosting works are
// not found is Unknown, whatever its works on the managed cluster say:
// they hold only its managed-side manifests.
func probe(mca *addonv1alpha1.ManagedClusterAddOn, works, hosting []*workv1.ManifestWork) *metav1.Condition {
	if meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied) == nil &&
		meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied) == nil {
		return nil
	}
	cond := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: status, Reason: reason, Message: msg}
	}
	// The hub deploys manifests on the hosting cluster (its finalizer says
	// so) and its works there are not seen yet: the works of the managed
	// cluster alone would judge an agent that does not run yet.
	if host := template.HostingCluster(mca); host != "" && len(hosting) == 0 &&
		controllerutil.ContainsFinalizer(mca, addonv1alpha1.AddonHostingManifestFinalizer) {
		return cond(metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonWorkNotFound,
			fmt.Sprintf("Addon manifestWork is not found on hosting cluster %s", host))
	}
	works = append(template.SelectDeployWorks(mca.Name, works), hosting...)
	if len(works) == 0 {
		return cond(metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonWorkNotFound, "Addon manifestWork is not found")
	}
	var deployments []workv1.ResourceIdentifier
	for _, w := range works {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
		switch {
		case c == nil:
			return cond(metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonWorkNotApplied, "Addon manifestWork is not applied yet")
		case c.Status == metav1.ConditionFalse:
			return cond(metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonWorkNotApplied, c.Message)
		}
		deployments = append(deployments, probedDeployments(w)...)
	}
	if len(deployments) == 0 {
		// No Deployment to probe: the works' own Available condition decides.
		return cond(metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonWorkApply, "Addon manifestWork is applied")
	}
	var empty []workv1.ResourceIdentifier
	for _, d := range deployments {
		values := feedback(works, d)
		if len(values) == 0 {
			empty = append(empty, d)
			continue
		}
		if err := deploymentAvailable(d, values); err != nil {
			return cond(metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonProbeUnavailable, fmt.Sprintf("Probe addon unavailable with err %v", err))
		}
	}
	if len(empty) == len(deployments) {
		msg := fmt.Sprintf("Probe results are not returned for %d probe fields", len(empty))
		if len(empty) == 1 {
			msg = fmt.Sprintf("Probe results are not returned for %s/%s: %s/%s", empty[0].Group, empty[0].Resource, empty[0].Namespace, empty[0].Name)
		}
		return cond(metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonNoProbeResult, msg)
	}
	return cond(metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonProbeAvailable, fmt.Sprintf("%s add-on is available.", mca.Name))
}

// probedDeployments returns the Deployments of w's manifests, except those
// scaled to zero, which are not probed.
func probedDeployments(w *workv1.ManifestWork) []workv1.ResourceIdentifier {
	var out []workv1.ResourceIdentifier
	for _, m := range w.Spec.Workload.Manifests {
		meta, err := m.ResourceMeta()
		if err != nil || meta.Kind != "Deployment" || meta.Group != "apps" {
			continue
		}
		var d struct {
			Spec struct {
				Replicas *int64 `json:"replicas"`
			} `json:"spec"`
		}
		if json.Unmarshal(m.Raw, &d) != nil || d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
			continue
		}
		out = append(out, workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: meta.Namespace, Name: meta.Name})
	}
	return out
}

// feedback returns the status feedback values of the manifest id in works.
func feedback(works []*workv1.ManifestWork, id workv1.ResourceIdentifier) []workv1.FeedbackValue {
	for _, w := range works {
		for _, m := range w.Status.ResourceStatus.Manifests {
			if id.Matches(m.ResourceMeta) && len(m.StatusFeedbacks.Values) > 0 {
				return m.StatusFeedbacks.Values
			}
		}
	}
	return nil
}

// deploymentAvailable is OCM's availability check of a Deployment from its
// well-known status feedback: available when it wants no replica or has
// one ready.
func deploymentAvailable(id workv1.ResourceIdentifier, values []workv1.FeedbackValue) error {
	ready, desired := int64(-1), int64(-1)
	for _, v := range values {
		if v.Value.Integer == nil {
			continue
		}
		switch v.Name {
		case "ReadyReplicas":
			ready = *v.Value.Integer
		case "Replicas":
			desired = *v.Value.Integer
		}
	}
	switch {
	case ready == -1:
		return fmt.Errorf("readyReplica is not probed")
	case desired == -1:
		return fmt.Errorf("desiredNumberReplicas is not probed")
	case desired == 0 || ready >= 1:
		return nil
	}
	return fmt.Errorf("desiredNumberReplicas is %d but readyReplica is %d for %s %s/%s", desired, ready, id.Resource, id.Namespace, id.Name)
}
