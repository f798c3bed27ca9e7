package rollout

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

var adc = addonv1alpha1.ConfigGroupResource{Group: "addon.open-cluster-management.io", Resource: "addondeploymentconfigs"}

// desired is the desired AddOnDeploymentConfig ocm/deploy-config with hash.
func desired(hash string) *addonv1alpha1.ConfigSpecHash {
	return &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "ocm", Name: "deploy-config"}, SpecHash: hash}
}

// newMCA builds helloworld in cluster1 desiring deploy-config at hash, of
// kind gr.
func newMCA(gr addonv1alpha1.ConfigGroupResource, hash string, conditions ...metav1.Condition) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "helloworld", Namespace: "cluster1", Generation: 1},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			Conditions:       conditions,
			ConfigReferences: []addonv1alpha1.ConfigReference{{ConfigGroupResource: gr, DesiredConfig: desired(hash)}},
		},
	}
}

// work is a deploy work rendered from deploy-config at hash, with an
// Applied condition of status applied ("" for none) at generation gen.
func work(name, hash string, applied metav1.ConditionStatus, gen int64) workv1.ManifestWork {
	h := addonconfig.Hashes{}
	if hash != "" {
		h[addonconfig.Key{ConfigGroupResource: adc, ConfigReferent: desired(hash).ConfigReferent}.String()] = hash
	}
	w := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cluster1", Generation: 2,
		Annotations: map[string]string{workv1.ConfigSpecHashAnnotationKey: h.Annotation()}}}
	if applied != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: applied, ObservedGeneration: gen, Message: "boom"}}
	}
	return w
}

// hosted annotates mca with hosting cluster hosting1.
func hosted(mca *addonv1alpha1.ManagedClusterAddOn) *addonv1alpha1.ManagedClusterAddOn {
	mca.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "hosting1"}
	return mca
}

func TestProgress(t *testing.T) {
	cma := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "helloworld"},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{{ConfigGroupResource: adc}}}}
	manifestApplied := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionTrue}
	tests := []struct {
		name    string
		mca     *addonv1alpha1.ManagedClusterAddOn
		works   []workv1.ManifestWork
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{name: "unsupported kind", mca: newMCA(addonv1alpha1.ConfigGroupResource{Resource: "configmaps"}, "h1"),
			status: metav1.ConditionFalse, reason: addonv1alpha1.ProgressingReasonConfigurationUnsupported,
			message: "Configuration with gvr /configmaps is not supported for this addon"},
		{name: "no work yet", mca: newMCA(adc, "h1"), status: metav1.ConditionFalse,
			reason: addonv1alpha1.ProgressingReasonWaitingForManifestApplied, message: msgWaitingForManifestApplied},
		{name: "no work after ManifestApplied", mca: newMCA(adc, "h1", manifestApplied), status: metav1.ConditionTrue,
			reason: addonv1alpha1.ProgressingReasonProgressing, message: msgNoWorks},
		{name: "hosted, no work yet", mca: hosted(newMCA(adc, "h1", manifestApplied)), status: metav1.ConditionFalse,
			reason: addonv1alpha1.ProgressingReasonWaitingForHostingManifestApplied, message: msgWaitingForHostingManifestApplied},
		{name: "hosted, its hosting work completed", mca: hosted(newMCA(adc, "h1")),
			works:  []workv1.ManifestWork{work("addon-helloworld-deploy-hosting-cluster1-0", "h1", metav1.ConditionTrue, 2)},
			status: metav1.ConditionFalse, reason: addonv1alpha1.ProgressingReasonCompleted, message: msgCompleted},
		{name: "work of older configurations", mca: newMCA(adc, "h2"), works: []workv1.ManifestWork{work("addon-helloworld-deploy-0", "h1", metav1.ConditionTrue, 2)},
			status: metav1.ConditionTrue, reason: addonv1alpha1.ProgressingReasonProgressing, message: msgMismatch},
		{name: "desired configuration without hash", mca: newMCA(adc, ""), works: []workv1.ManifestWork{work("addon-helloworld-deploy-0", "", metav1.ConditionTrue, 2)},
			status: metav1.ConditionTrue, reason: addonv1alpha1.ProgressingReasonProgressing, message: msgMismatch},
		{name: "not applied at this generation", mca: newMCA(adc, "h1"), works: []workv1.ManifestWork{work("addon-helloworld-deploy-0", "h1", metav1.ConditionTrue, 1)},
			status: metav1.ConditionTrue, reason: addonv1alpha1.ProgressingReasonProgressing, message: msgNotReady},
		{name: "apply failed", mca: newMCA(adc, "h1"), works: []workv1.ManifestWork{
			work("addon-helloworld-deploy-0", "h1", metav1.ConditionTrue, 2), work("addon-helloworld-deploy-1", "h1", metav1.ConditionFalse, 2)},
			status: metav1.ConditionFalse, reason: addonv1alpha1.ProgressingReasonFailed, message: "work addon-helloworld-deploy-1 is not applied: boom"},
		{name: "completed", mca: newMCA(adc, "h1"), works: []workv1.ManifestWork{work("addon-helloworld-deploy-0", "h1", metav1.ConditionTrue, 2)},
			status: metav1.ConditionFalse, reason: addonv1alpha1.ProgressingReasonCompleted, message: msgCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			progress(tt.mca, cma, tt.works)
			c := meta.FindStatusCondition(tt.mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
			if c == nil || c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.message {
				t.Fatalf("Progressing = %+v, want %s %s %q", c, tt.status, tt.reason, tt.message)
			}
			ref := tt.mca.Status.ConfigReferences[0]
			if completed := tt.reason == addonv1alpha1.ProgressingReasonCompleted; completed != reflect.DeepEqual(ref.LastAppliedConfig, ref.DesiredConfig) {
				t.Errorf("lastAppliedConfig = %+v with desiredConfig %+v, want them equal only when completed", ref.LastAppliedConfig, ref.DesiredConfig)
			}
		})
	}
}

func TestDeployWorks(t *testing.T) {
	works := []workv1.ManifestWork{
		work("addon-helloworld-deploy-0", "", "", 0), work("addon-helloworld-pre-delete", "", "", 0), work("addon-other-deploy-0", "", "", 0),
	}
	got := deployWorks("helloworld", works)
	if len(got) != 1 || got[0].Name != "addon-helloworld-deploy-0" {
		t.Errorf("deployWorks() = %v, want only addon-helloworld-deploy-0", got)
	}
}
