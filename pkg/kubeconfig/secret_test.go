package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromSecret(t *testing.T) {
	embedded, err := forClientCertificate(&Info{Server: "https://hub:6443", CAData: []byte("CA")}, []byte("CERT"), []byte("KEY"))
	if err != nil {
		t.Fatal(err)
	}
	// secret returns Secret data with the kubeconfig and the other keys.
	secret := func(kubeconfig string, keys ...string) map[string][]byte {
		data := map[string][]byte{KubeconfigKey: []byte(kubeconfig)}
		for i := 0; i+1 < len(keys); i += 2 {
			data[keys[i]] = []byte(keys[i+1])
		}
		return data
	}
	ocm := kubeconfigYAML(`{server: "https://hub:6443", certificate-authority-data: Q0E=}`, `{client-certificate: tls.crt, client-key: tls.key}`)
	mounted := kubeconfigYAML(`{server: "https://hub:6443", certificate-authority: /spoke/hub-kubeconfig/ca.crt}`,
		`{client-certificate: /spoke/hub-kubeconfig/tls.crt, client-key: /spoke/hub-kubeconfig/tls.key}`)
	tests := []struct {
		name            string
		data            map[string][]byte
		wantCA          string
		wantCert        string
		wantKey         string
		wantToken       string
		wantErrContains string
	}{
		{name: "embedded data", data: secret(string(embedded)), wantCA: "CA", wantCert: "CERT", wantKey: "KEY"},
		{name: "OCM's kubeconfig naming tls.crt and tls.key", data: secret(ocm, TLSCertKey, "FILECERT", TLSKeyKey, "FILEKEY"),
			wantCA: "CA", wantCert: "FILECERT", wantKey: "FILEKEY"},
		{name: "files under the Secret's mount path", data: secret(mounted, TLSCertKey, "FILECERT", TLSKeyKey, "FILEKEY", "ca.crt", "FILECA"),
			wantCA: "FILECA", wantCert: "FILECERT", wantKey: "FILEKEY"},
		{name: "token file", data: secret(kubeconfigYAML(`{server: "https://hub:6443"}`, `{tokenFile: token}`), "token", "TOKEN"), wantToken: "TOKEN"},
		{name: "file that is no key of the Secret", data: secret(ocm, TLSCertKey, "FILECERT"),
			wantErrContains: "names file tls.key (client-key), which is not a key of the Secret; add it to the Secret under key tls.key"},
		{name: "file of an empty key", data: secret(ocm, TLSCertKey, "FILECERT", TLSKeyKey, ""), wantErrContains: "which is not a key of the Secret"},
		{name: "file outside the Secret", data: secret(kubeconfigYAML(`{server: "https://hub:6443", certificate-authority: /etc/kubernetes/pki/ca.crt}`, `{token: t}`)),
			wantErrContains: "/etc/kubernetes/pki/ca.crt (certificate-authority), which is not a key of the Secret"},
		{name: "exec credential plugin", data: secret(kubeconfigYAML(`{server: "https://hub:6443"}`, `{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}`)),
			wantErrContains: `runs the exec credential plugin "/bin/sh", which the agent does not run; use a client certificate or a token embedded in the Secret`},
		{name: "auth provider", data: secret(kubeconfigYAML(`{server: "https://hub:6443"}`, `{auth-provider: {name: gcp}}`)),
			wantErrContains: `uses the auth provider "gcp", which the agent does not run`},
		{name: "no kubeconfig", data: map[string][]byte{TLSCertKey: []byte("CERT")}, wantErrContains: "key kubeconfig is missing"},
		{name: "empty kubeconfig", data: secret(""), wantErrContains: "key kubeconfig is missing"},
		{name: "not a kubeconfig", data: secret("{{"), wantErrContains: "key kubeconfig: decode kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := FromSecret(tt.data)
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				return
			}
			require.NoError(t, err)
			if string(info.CAData) != tt.wantCA || string(info.CertData) != tt.wantCert || string(info.KeyData) != tt.wantKey || info.Token != tt.wantToken {
				t.Errorf("FromSecret = CA %q cert %q key %q token %q, want %q %q %q %q",
					info.CAData, info.CertData, info.KeyData, info.Token, tt.wantCA, tt.wantCert, tt.wantKey, tt.wantToken)
			}
			cfg, err := info.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "" {
				t.Errorf("the client configuration names files: %+v", cfg.TLSClientConfig)
			}
			if string(cfg.CertData) != tt.wantCert || cfg.BearerToken != tt.wantToken || cfg.Host != "https://hub:6443" {
				t.Errorf("the client configuration has cert %q token %q host %q", cfg.CertData, cfg.BearerToken, cfg.Host)
			}
		})
	}
}
