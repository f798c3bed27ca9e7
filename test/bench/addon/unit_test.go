package addon

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// The unit tests cover the benchmark's own predicates; they start no control
// planes and run under plain `go test` and -short.

func TestRolledOut(t *testing.T) {
	ref := func(resource, name, desired, applied string) addonv1alpha1.ConfigReference {
		r := addonv1alpha1.ConfigReference{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: resource}}
		referent := addonv1alpha1.ConfigReferent{Namespace: configNamespace, Name: name}
		if desired != "" {
			r.DesiredConfig = &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: desired}
		}
		if applied != "" {
			r.LastAppliedConfig = &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: applied}
		}
		return r
	}
	template := ref(addonv1alpha1.AddOnTemplateResource, "helloworld-0.1.0", "t1", "t1")
	tests := []struct {
		name   string
		reason string
		refs   []addonv1alpha1.ConfigReference
		want   bool
	}{
		{name: "completed at the new hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "new")}, want: true},
		{name: "completed at the old hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "old", "old")}},
		{name: "desired but not applied yet", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "old")}},
		{name: "still progressing", reason: addonv1alpha1.ProgressingReasonProgressing,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, configName, "new", "new")}},
		{name: "another config at the hash", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template, ref(addonv1alpha1.AddOnDeploymentConfigResource, "other", "new", "new")}},
		{name: "no deployment config yet", reason: addonv1alpha1.ProgressingReasonCompleted,
			refs: []addonv1alpha1.ConfigReference{template}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			mca.Status.ConfigReferences = tt.refs
			status := metav1.ConditionFalse
			if tt.reason == addonv1alpha1.ProgressingReasonProgressing {
				status = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
				Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: status, Reason: tt.reason})
			if got := rolledOut(mca, "new"); got != tt.want {
				t.Errorf("rolledOut = %v, want %v", got, tt.want)
			}
		})
	}
}
