package agent

import (
	"strings"
	"testing"
)

func TestValidateManagedKubeconfigSecret(t *testing.T) {
	tests := []struct {
		name            string
		secret          string
		wantErrContains string
	}{
		{name: "default mode", secret: ""},
		{name: "hosted mode", secret: "external-managed-kubeconfig"},
		{name: "invalid name", secret: "Not_A_Name", wantErrContains: "invalid --managed-kubeconfig-secret"},
		{name: "same as hub credential", secret: "hub-kubeconfig-secret", wantErrContains: "must differ"},
		{name: "same as bootstrap", secret: "bootstrap-hub-kubeconfig", wantErrContains: "must differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Namespace: "klusterlet-c1", ManagedKubeconfigSecret: tt.secret}
			o.Default()
			err := o.Validate()
			if tt.wantErrContains == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErrContains)
			}
		})
	}
}
