package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
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
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErrContains)
		})
	}
}
