package rollout

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// OCM's messages of the Progressing condition.
const (
	msgWaitingForManifestApplied        = "Waiting for ManagedClusterAddOn ManifestApplied condition"
	msgWaitingForHostingManifestApplied = "Waiting for ManagedClusterAddOn HostingManifestApplied condition"
	msgNoWorks                          = "progressing... no addon works"
	msgMismatch                         = "progressing... mca and work configs mismatch"
	msgNotReady                         = "progressing... work is not ready"
	msgCompleted                        = "completed with no errors."
)

// progress sets the Progressing condition of mca, an add-on of cma whose
// deploy works are works, and, when it completed, its lastAppliedConfigs:
//
//   - a configuration kind cma does not support: False ConfigurationUnsupported;
//   - no deploy work: False WaitingForManifestApplied before the
//     ManifestApplied condition (a hosted add-on: WaitingForHostingManifestApplied
//     before HostingManifestApplied), True Progressing after it;
//   - a work rendered from other configurations than the desired ones (its
//     config-spec-hash annotation), or a desired configuration without a
//     spec hash: True Progressing;
//   - a work whose Applied condition is False at its generation: False Failed;
//   - a work not yet Applied at its generation: True Progressing;
//   - else False Completed, and every lastAppliedConfig becomes its
//     desiredConfig.
func progress(mca *addonv1alpha1.ManagedClusterAddOn, cma *addonv1alpha1.ClusterManagementAddOn, works []workv1.ManifestWork) {
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
			Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: status,
			Reason: reason, Message: msg, ObservedGeneration: mca.Generation,
		})
	}
	for _, ref := range mca.Status.ConfigReferences {
		if !addonconfig.Supports(cma, ref.ConfigGroupResource) {
			set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonConfigurationUnsupported,
				fmt.Sprintf("Configuration with gvr %s/%s is not supported for this addon", ref.Group, ref.Resource))
			return
		}
	}
	if len(works) == 0 {
		hosted := template.HostingCluster(mca) != ""
		switch {
		case hosted && meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied) == nil:
			set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonWaitingForHostingManifestApplied, msgWaitingForHostingManifestApplied)
		case !hosted && meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied) == nil:
			set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonWaitingForManifestApplied, msgWaitingForManifestApplied)
		default:
			set(metav1.ConditionTrue, addonv1alpha1.ProgressingReasonProgressing, msgNoWorks)
		}
		return
	}
	desired := addonconfig.Desired(mca)
	var failed []string
	ready := true
	for i := range works {
		w := &works[i]
		if !desired.Equal(addonconfig.FromAnnotations(w.Annotations)) || hasEmpty(desired) {
			set(metav1.ConditionTrue, addonv1alpha1.ProgressingReasonProgressing, msgMismatch)
			return
		}
		applied := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
		switch {
		case applied == nil || applied.ObservedGeneration != w.Generation || applied.Status == metav1.ConditionUnknown:
			ready = false
		case applied.Status == metav1.ConditionFalse:
			failed = append(failed, fmt.Sprintf("work %s is not applied: %s", w.Name, applied.Message))
		}
	}
	switch {
	case len(failed) > 0:
		set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonFailed, strings.Join(failed, "; "))
	case !ready:
		set(metav1.ConditionTrue, addonv1alpha1.ProgressingReasonProgressing, msgNotReady)
	default:
		for i := range mca.Status.ConfigReferences {
			ref := &mca.Status.ConfigReferences[i]
			ref.LastAppliedConfig = ref.DesiredConfig.DeepCopy()
		}
		set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonCompleted, msgCompleted)
	}
}

// hasEmpty reports whether a desired configuration has no spec hash (its
// object could not be read): no work can have been rendered from it.
func hasEmpty(h addonconfig.Hashes) bool {
	for _, v := range h {
		if v == "" {
			return true
		}
	}
	return false
}

// deployWorks keeps the deploy works of the add-on name among works.
func deployWorks(name string, works []workv1.ManifestWork) []workv1.ManifestWork {
	var out []workv1.ManifestWork
	for i := range works {
		if strings.HasPrefix(works[i].Name, template.DeployWorkNamePrefix(name)) {
			out = append(out, works[i])
		}
	}
	return out
}
