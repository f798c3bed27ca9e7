package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
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

func TestCABundle(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(caFile, []byte("FILECA"), 0o600))
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name            string
		tls             rest.TLSClientConfig
		want            string
		wantErrContains string
	}{
		{name: "data", tls: rest.TLSClientConfig{CAData: []byte("CA")}, want: "CA"},
		{name: "data wins over the file", tls: rest.TLSClientConfig{CAData: []byte("CA"), CAFile: missing}, want: "CA"},
		{name: "file", tls: rest.TLSClientConfig{CAFile: caFile}, want: "FILECA"},
		{name: "none", tls: rest.TLSClientConfig{}, want: ""},
		{name: "client certificate files are not read", tls: rest.TLSClientConfig{CAFile: caFile, CertFile: missing, KeyFile: missing}, want: "FILECA"},
		{name: "missing file", tls: rest.TLSClientConfig{CAFile: missing}, wantErrContains: "read the managed cluster's CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &rest.Config{TLSClientConfig: tt.tls}
			got, err := caBundle(cfg)
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.tls, cfg.TLSClientConfig, "caBundle changed the client configuration")
		})
	}
}
