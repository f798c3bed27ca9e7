package deploy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

func TestSetPodSecurity(t *testing.T) {
	ns := addonv1alpha1.DefaultAddonInstallNamespace
	violation := template.PodSecurityViolation{Kind: "Deployment", Namespace: ns, Name: "hello-agent", Failures: []podsecurity.Failure{
		{Reason: "seccompProfile", Detail: `pod or container "agent" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`},
	}}
	cases := []struct {
		name       string
		before     *metav1.Condition
		agent      *template.Agent
		wantStatus metav1.ConditionStatus // empty: no condition
		wantReason string
		wantEvent  bool
		wantText   []string
	}{
		{name: "no Pod template in an enforcing namespace", agent: &template.Agent{},
			before: &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnPodSecurity, Status: "False"}},
		{name: "every Pod template meets restricted", agent: &template.Agent{PodSecurityChecked: []string{ns}},
			wantStatus: "True", wantReason: addonv1alpha1.PodSecurityReasonMeetsRestricted, wantText: []string{ns}},
		{name: "a Pod template violates restricted", agent: &template.Agent{PodSecurityChecked: []string{ns}, PodSecurityViolations: []template.PodSecurityViolation{violation}},
			wantStatus: "False", wantReason: addonv1alpha1.PodSecurityReasonViolatesRestricted, wantEvent: true,
			wantText: []string{"cluster cluster1 refuses Pods of AddOnTemplate hello-template", "Deployment " + ns + "/hello-agent",
				`container "agent" must set securityContext.seccompProfile.type`, "The manifests are deployed", "To fix:", "seccompProfile.type=RuntimeDefault"}},
		{name: "a template that met restricted and no longer does", agent: &template.Agent{PodSecurityChecked: []string{ns}, PodSecurityViolations: []template.PodSecurityViolation{violation}},
			before:     &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnPodSecurity, Status: "True", Reason: addonv1alpha1.PodSecurityReasonMeetsRestricted},
			wantStatus: "False", wantReason: addonv1alpha1.PodSecurityReasonViolatesRestricted, wantEvent: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "hello", Generation: 3}}
			if tc.before != nil {
				mca.Status.Conditions = []metav1.Condition{*tc.before}
			}
			assert.Equal(t, tc.wantEvent, setPodSecurity(mca, "hello-template", tc.agent))
			c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnPodSecurity)
			if tc.wantStatus == "" {
				assert.Nil(t, c)
				return
			}
			if !assert.NotNil(t, c) {
				return
			}
			assert.Equal(t, tc.wantStatus, c.Status)
			assert.Equal(t, tc.wantReason, c.Reason)
			assert.Equal(t, int64(3), c.ObservedGeneration)
			for _, w := range tc.wantText {
				assert.Contains(t, c.Message, w)
			}
			// The same violation again records no second event.
			assert.False(t, setPodSecurity(mca, "hello-template", tc.agent))
		})
	}
}
