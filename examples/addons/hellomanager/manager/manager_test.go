package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// withRegistration returns an add-on on cluster1 whose kubeClient
// registration has driver and user.
func withRegistration(driver, user string) *addonv1beta1.ManagedClusterAddOn {
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: DefaultAddonName}}
	if driver != "" || user != "" {
		mca.Status.Registrations = []addonv1beta1.RegistrationConfig{{Type: addonv1beta1.KubeClient, KubeClient: &addonv1beta1.KubeClientConfig{
			Driver: driver, Subject: addonv1beta1.KubeClientSubject{BaseSubject: addonv1beta1.BaseSubject{User: user}}}}}
	}
	return mca
}

func TestRegistrations(t *testing.T) {
	r := &registration{opts: Options{}.withDefaults()}
	defaultUser := DefaultUser("cluster1", DefaultAddonName, DefaultAddonName)
	tokenUser := "system:serviceaccount:cluster1:hellomanager-agent"
	tests := []struct {
		name       string
		mca        *addonv1beta1.ManagedClusterAddOn
		wantDriver string
		wantUser   string
	}{
		{name: "no driver reported yet: the default subject", mca: withRegistration("", ""), wantUser: defaultUser},
		{name: "csr: the default subject", mca: withRegistration(driverCSR, "someone-else"), wantDriver: driverCSR, wantUser: defaultUser},
		{name: "token: the agent's subject kept", mca: withRegistration(driverToken, tokenUser), wantDriver: driverToken, wantUser: tokenUser},
		{name: "token before the agent wrote a subject", mca: withRegistration(driverToken, ""), wantDriver: driverToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			regs := r.registrations(tt.mca)
			if len(regs) != 1 || regs[0].Type != addonv1beta1.KubeClient || regs[0].KubeClient == nil {
				t.Fatalf("registrations = %+v, want one kubeClient registration", regs)
			}
			if got := regs[0].KubeClient; got.Driver != tt.wantDriver || got.Subject.User != tt.wantUser {
				t.Errorf("driver %q user %q, want %q %q", got.Driver, got.Subject.User, tt.wantDriver, tt.wantUser)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	available := clusterv1.ManagedCluster{}
	meta.SetStatusCondition(&available.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "R"})
	unknown := clusterv1.ManagedCluster{}
	meta.SetStatusCondition(&unknown.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown, Reason: "R"})
	work := func(workAvailable metav1.ConditionStatus, ready *int64) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		if workAvailable != "" {
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkAvailable, Status: workAvailable, Reason: "R", Message: "m"})
		}
		if ready != nil {
			w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
				ResourceMeta:    workv1.ManifestResourceMeta{Group: "apps", Resource: "deployments", Name: "hellomanager-agent"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: "ReadyReplicas", Value: workv1.FieldValue{Integer: ready}}}},
			}}
		}
		return w
	}
	tests := []struct {
		name    string
		cluster *clusterv1.ManagedCluster
		work    *workv1.ManifestWork
		status  metav1.ConditionStatus
		reason  string
	}{
		{name: "work not applied yet", cluster: &available, work: work("", nil), status: metav1.ConditionUnknown, reason: addonv1alpha1.AddonAvailableReasonWorkNotApplied},
		{name: "work unavailable", cluster: &available, work: work(metav1.ConditionFalse, nil), status: metav1.ConditionFalse, reason: addonv1alpha1.AddonAvailableReasonWorkNotApplied},
		{name: "no feedback yet", cluster: &available, work: work(metav1.ConditionTrue, nil), status: metav1.ConditionUnknown, reason: addonv1alpha1.AddonAvailableReasonNoProbeResult},
		{name: "no ready replica", cluster: &available, work: work(metav1.ConditionTrue, ptr.To[int64](0)), status: metav1.ConditionFalse, reason: addonv1alpha1.AddonAvailableReasonProbeUnavailable},
		{name: "ready", cluster: &available, work: work(metav1.ConditionTrue, ptr.To[int64](1)), status: metav1.ConditionTrue, reason: addonv1alpha1.AddonAvailableReasonProbeAvailable},
		{name: "cluster unknown: left to the hub", cluster: &unknown, work: work(metav1.ConditionTrue, ptr.To[int64](1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mca := withRegistration("", "")
			probe(mca, tt.cluster, tt.work)
			c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
			switch {
			case tt.status == "" && c != nil:
				t.Errorf("Available = %+v, want it left alone", c)
			case tt.status != "" && (c == nil || c.Status != tt.status || c.Reason != tt.reason):
				t.Errorf("Available = %+v, want %s (%s)", c, tt.status, tt.reason)
			}
		})
	}
}

func TestConfigHashes(t *testing.T) {
	mca := withRegistration("", "")
	mca.Status.ConfigReferences = []addonv1beta1.ConfigReference{
		{ConfigGroupResource: SupportedConfigs[0], DesiredConfig: &addonv1beta1.ConfigSpecHash{
			ConfigReferent: addonv1beta1.ConfigReferent{Namespace: "ns", Name: "c"}, SpecHash: "h"}},
		{ConfigGroupResource: addonv1beta1.ConfigGroupResource{Resource: "configmaps"}},
	}
	got := configHashes(mca)
	if len(got) != 1 || got["addondeploymentconfigs.addon.open-cluster-management.io/ns/c"] != "h" {
		t.Errorf("configHashes = %v, want the desired AddOnDeploymentConfig's hash alone", got)
	}
}

// TestAgentMeetsRestricted checks that the agent's Pod would be admitted in
// the default install namespace, which enforces Pod Security level
// restricted.
func TestAgentMeetsRestricted(t *testing.T) {
	dep := agentDeployment(Options{}.withDefaults(), "cluster1", DefaultInstallNamespace)
	if f := podsecurity.Check(&dep.Spec.Template.ObjectMeta, &dep.Spec.Template.Spec); len(f) > 0 {
		t.Errorf("agent Deployment %s", podsecurity.Describe(f))
	}
}
