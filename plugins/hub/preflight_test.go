package hub

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestCheckAdmissionPolicyAPI(t *testing.T) {
	policies := metav1.APIResource{Name: "validatingadmissionpolicies", Kind: "ValidatingAdmissionPolicy"}
	bindings := metav1.APIResource{Name: "validatingadmissionpolicybindings", Kind: "ValidatingAdmissionPolicyBinding"}
	webhooks := metav1.APIResource{Name: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"}
	tests := []struct {
		name      string
		resources []*metav1.APIResourceList
		failWith  error
		wantErr   []string
	}{
		{name: "served", resources: []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1", APIResources: []metav1.APIResource{webhooks, policies, bindings}}}},
		{name: "only webhooks, as before 1.30", resources: []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1", APIResources: []metav1.APIResource{webhooks}}},
			wantErr: []string{"https://hub:6443 (Kubernetes v1.29.4)", "does not serve validatingadmissionpolicies at admissionregistration.k8s.io/v1", "GA in Kubernetes 1.30", "Kubernetes 1.30 or later"}},
		{name: "only at beta", resources: []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1beta1", APIResources: []metav1.APIResource{policies, bindings}}},
			wantErr: []string{"does not serve validatingadmissionpolicies", "1.30 or later"}},
		{name: "policies without bindings", resources: []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1", APIResources: []metav1.APIResource{policies}}},
			wantErr: []string{"does not serve validatingadmissionpolicybindings"}},
		{name: "discovery fails", failWith: errors.New("connection refused"),
			wantErr: []string{"discover the APIs of https://hub:6443: connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tt.resources}, FakedServerVersion: &version.Info{GitVersion: "v1.29.4"}}
			if tt.failWith != nil {
				fake.AddReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, tt.failWith })
			}
			err := checkAdmissionPolicyAPI(t.Context(), fake, "https://hub:6443")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}
