package registration

import (
	"testing"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

func TestUsesToken(t *testing.T) {
	kube := addonv1alpha1.RegistrationConfig{SignerName: addonv1alpha1.KubeAPIServerClientSignerName}
	custom := addonv1alpha1.RegistrationConfig{SignerName: "example.com/signer"}
	tests := []struct {
		name   string
		driver string
		regs   []addonv1alpha1.RegistrationConfig
		want   bool
	}{
		{"token with kube client", addonv1alpha1.KubeClientDriverToken, []addonv1alpha1.RegistrationConfig{custom, kube}, true},
		{"token without kube client", addonv1alpha1.KubeClientDriverToken, []addonv1alpha1.RegistrationConfig{custom}, false},
		{"csr", addonv1alpha1.KubeClientDriverCSR, []addonv1alpha1.RegistrationConfig{kube}, false},
		{"unset", "", []addonv1alpha1.RegistrationConfig{kube}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{KubeClientDriver: tt.driver, Registrations: tt.regs}}
			if got := UsesToken(mca); got != tt.want {
				t.Errorf("UsesToken = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServiceAccountUID(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    string
		wantOK  bool
	}{
		{"ours", ReadyMessage("cluster1", "helloworld-agent", "1234-abcd"), "1234-abcd", true},
		{"OCM's", "ServiceAccount cluster1/test-agent (UID: test-uid) is ready", "test-uid", true},
		{"no UID", "ServiceAccount cluster1/test-agent is ready", "", false},
		{"empty UID", "ServiceAccount cluster1/test-agent (UID: ) is ready", "", false},
		{"unterminated", "ServiceAccount cluster1/test-agent (UID: abc", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ServiceAccountUID(tt.message)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ServiceAccountUID(%q) = %q, %v; want %q, %v", tt.message, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestTokenSubject(t *testing.T) {
	if got := TokenSubject("cluster1", "helloworld"); got.User != "system:serviceaccount:cluster1:helloworld-agent" || len(got.Groups) != 0 {
		t.Errorf("TokenSubject = %+v", got)
	}
}

func TestCustomSigners(t *testing.T) {
	tests := []struct {
		signer     string
		custom     bool
		secretName string
	}{
		{"example.com/s1", true, "hello-example.com-s1-client-cert"},
		{"open-cluster-management.io/a/b", true, "hello-open-cluster-management.io-a-b-client-cert"},
		{addonv1alpha1.KubeAPIServerClientSignerName, false, "hello-kubernetes.io-kube-apiserver-client-client-cert"},
		{"kubernetes.io/kubelet-serving", false, "hello-kubernetes.io-kubelet-serving-client-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.signer, func(t *testing.T) {
			if got := IsCustomSigner(tt.signer); got != tt.custom {
				t.Errorf("IsCustomSigner = %v, want %v", got, tt.custom)
			}
			if got := CustomSignerSecretName("hello", tt.signer); got != tt.secretName {
				t.Errorf("CustomSignerSecretName = %q, want %q", got, tt.secretName)
			}
		})
	}
}
