package health

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// workBuilder builds works of add-on hello.
type workBuilder struct{ w *workv1.ManifestWork }

// newWork returns a work named name.
func newWork(name string) workBuilder {
	return workBuilder{&workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// manifest adds a raw manifest.
func (b workBuilder) manifest(raw string) workBuilder {
	b.w.Spec.Workload.Manifests = append(b.w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}})
	return b
}

// available sets the work's Available condition.
func (b workBuilder) available(status metav1.ConditionStatus, msg string) workBuilder {
	b.w.Status.Conditions = append(b.w.Status.Conditions, metav1.Condition{Type: workv1.WorkAvailable, Status: status, Message: msg})
	return b
}

// feedback reports status feedback of Deployment ns/name.
func (b workBuilder) feedback(ns, name string, values map[string]int64) workBuilder {
	m := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Resource: "deployments", Namespace: ns, Name: name}}
	for k, v := range values {
		m.StatusFeedbacks.Values = append(m.StatusFeedbacks.Values, workv1.FeedbackValue{Name: k,
			Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}})
	}
	b.w.Status.ResourceStatus.Manifests = append(b.w.Status.ResourceStatus.Manifests, m)
	return b
}

// deploymentManifest is a Deployment manifest with replicas (-1: unset).
func deploymentManifest(name string, replicas int) string {
	spec := `{}`
	if replicas >= 0 {
		spec = `{"replicas": ` + strconv.Itoa(replicas) + `}`
	}
	return `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "` + name + `", "namespace": "ns"}, "spec": ` + spec + `}`
}

func TestProbe(t *testing.T) {
	applied := []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionTrue}}
	cm := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}`
	ready := map[string]int64{"ReadyReplicas": 1, "Replicas": 1}
	cases := []struct {
		name       string
		conditions []metav1.Condition
		works      []*workv1.ManifestWork
		want       *metav1.Condition // nil: left alone
		hosted     bool              // hosted on c1, the hub deploying there
		hosting    []*workv1.ManifestWork
	}{{
		name:  "never applied: nothing to judge",
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").w},
	}, {
		name: "no deploy work", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-pre-delete").w},
		want:  &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "WorkNotFound", Message: "Addon manifestWork is not found"},
	}, {
		name: "a work not reported yet", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", 1)).w},
		want:  &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "WorkNotApplied", Message: "Addon manifestWork is not applied yet"},
	}, {
		name: "a work not available", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").available(metav1.ConditionFalse, "1 of 2 resources are not available").w},
		want:  &metav1.Condition{Status: metav1.ConditionFalse, Reason: "WorkNotApplied", Message: "1 of 2 resources are not available"},
	}, {
		name: "no Deployment: the works' availability decides", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(cm).manifest(deploymentManifest("zero", 0)).available(metav1.ConditionTrue, "").w},
		want:  &metav1.Condition{Status: metav1.ConditionTrue, Reason: "WorkApplied", Message: "Addon manifestWork is applied"},
	}, {
		name: "no feedback yet", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", -1)).available(metav1.ConditionTrue, "").w},
		want: &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "NoProbeResult",
			Message: "Probe results are not returned for apps/deployments: ns/a"},
	}, {
		name: "no feedback from two Deployments", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", 1)).manifest(deploymentManifest("b", 2)).
			available(metav1.ConditionTrue, "").w},
		want: &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "NoProbeResult", Message: "Probe results are not returned for 2 probe fields"},
	}, {
		name: "every Deployment of every work ready", conditions: applied,
		works: []*workv1.ManifestWork{
			newWork("addon-hello-deploy-1").manifest(deploymentManifest("b", 1)).available(metav1.ConditionTrue, "").feedback("ns", "b", ready).w,
			newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", 1)).available(metav1.ConditionTrue, "").feedback("ns", "a", ready).w,
		},
		want: &metav1.Condition{Status: metav1.ConditionTrue, Reason: "ProbeAvailable", Message: "hello add-on is available."},
	}, {
		name: "one Deployment not ready", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", 1)).manifest(deploymentManifest("b", 1)).
			available(metav1.ConditionTrue, "").feedback("ns", "a", ready).feedback("ns", "b", map[string]int64{"ReadyReplicas": 0, "Replicas": 1}).w},
		want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ProbeUnavailable",
			Message: "Probe addon unavailable with err desiredNumberReplicas is 1 but readyReplica is 0 for deployments ns/b"},
	}, {
		name: "ready replicas not reported", conditions: applied,
		works: []*workv1.ManifestWork{newWork("addon-hello-deploy-0").manifest(deploymentManifest("a", 1)).available(metav1.ConditionTrue, "").
			feedback("ns", "a", map[string]int64{"Replicas": 1}).w},
		want: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "ProbeUnavailable", Message: "Probe addon unavailable with err readyReplica is not probed"},
	}}
	hostedApplied := append(applied, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, Status: metav1.ConditionTrue})
	managedSide := newWork("addon-hello-deploy-0").manifest(cm).available(metav1.ConditionTrue, "").w
	hostingWork := func() workBuilder {
		return newWork("addon-hello-deploy-hosting-c2-0").manifest(deploymentManifest("a", 1)).available(metav1.ConditionTrue, "")
	}
	cases = append(cases, []struct {
		name       string
		conditions []metav1.Condition
		works      []*workv1.ManifestWork
		want       *metav1.Condition
		hosted     bool
		hosting    []*workv1.ManifestWork
	}{{
		// The managed side is applied before the hosting works are
		// written, or before the hub's cache shows them.
		name: "hosted: the hosting works not seen yet", conditions: applied, hosted: true,
		works: []*workv1.ManifestWork{managedSide},
		want:  &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "WorkNotFound", Message: "Addon manifestWork is not found on hosting cluster c1"},
	}, {
		name: "hosted: the hosting work's Deployment not reported yet", conditions: hostedApplied, hosted: true,
		works: []*workv1.ManifestWork{managedSide}, hosting: []*workv1.ManifestWork{hostingWork().w},
		want: &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "NoProbeResult",
			Message: "Probe results are not returned for apps/deployments: ns/a"},
	}, {
		name: "hosted: the hosting work's Deployment ready", conditions: hostedApplied, hosted: true,
		works: []*workv1.ManifestWork{managedSide}, hosting: []*workv1.ManifestWork{hostingWork().feedback("ns", "a", ready).w},
		want: &metav1.Condition{Status: metav1.ConditionTrue, Reason: "ProbeAvailable", Message: "hello add-on is available."},
	}}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
			if tc.hosted {
				mca.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "c1"}
				mca.Finalizers = []string{addonv1alpha1.AddonHostingManifestFinalizer}
			}
			mca.Status.Conditions = tc.conditions
			got := probe(mca, tc.works, tc.hosting)
			if tc.want == nil {
				if got != nil {
					t.Errorf("probe = %+v, want nil", got)
				}
				return
			}
			if got == nil || got.Type != addonv1alpha1.ManagedClusterAddOnConditionAvailable || got.Status != tc.want.Status ||
				got.Reason != tc.want.Reason || got.Message != tc.want.Message {
				t.Errorf("probe = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFeatureValue(t *testing.T) {
	for status, want := range map[metav1.ConditionStatus]string{
		metav1.ConditionTrue: "available", metav1.ConditionFalse: "unhealthy", metav1.ConditionUnknown: "unreachable", "": "unreachable",
	} {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if status != "" {
			mca.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: status}}
		}
		if got := featureValue(mca); got != want {
			t.Errorf("featureValue with Available %q = %q, want %q", status, got, want)
		}
	}
}
