package agent

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

func TestManagedConfig(t *testing.T) {
	valid, err := kubeconfig.ForToken("https://managed.example:6443", nil, "t0ken")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		data     map[string][]byte
		wantHost string
		wantErr  string
	}{
		{name: "embedded kubeconfig", data: map[string][]byte{"kubeconfig": valid}, wantHost: "https://managed.example:6443"},
		{name: "no kubeconfig key", data: map[string][]byte{"other": valid}, wantErr: "klusterlet-c2/external-managed-kubeconfig has no key kubeconfig"},
		{name: "not a kubeconfig", data: map[string][]byte{"kubeconfig": []byte("{not yaml")}, wantErr: "klusterlet-c2/external-managed-kubeconfig: load kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "klusterlet-c2", Name: "external-managed-kubeconfig"}, Data: tt.data}
			cfg, err := managedConfig(s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || cfg.BearerToken != "t0ken" {
				t.Errorf("config host %q token %q, want %q with the Secret's token", cfg.Host, cfg.BearerToken, tt.wantHost)
			}
		})
	}
}
