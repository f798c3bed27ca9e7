package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigBytes builds a one-context kubeconfig; change edits its user and
// cluster before it is serialized.
func kubeconfigBytes(t *testing.T, change func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	c := &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("CA")}
	u := &clientcmdapi.AuthInfo{Token: "secret-token"}
	if change != nil {
		change(c, u)
	}
	kc.Clusters["managed"], kc.AuthInfos["managed"] = c, u
	kc.Contexts["managed"] = &clientcmdapi.Context{Cluster: "managed", AuthInfo: "managed"}
	kc.CurrentContext = "managed"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestManagedClusterConfig(t *testing.T) {
	tests := []struct {
		name            string
		data            map[string][]byte
		wantHost        string
		wantErrContains string
	}{
		{name: "embedded credentials", data: map[string][]byte{KubeconfigKey: kubeconfigBytes(t, nil)}, wantHost: "https://127.0.0.1:6443"},
		{name: "no key", data: map[string][]byte{"config": kubeconfigBytes(t, nil)}, wantErrContains: "key kubeconfig is missing"},
		{name: "empty Secret", data: nil, wantErrContains: "key kubeconfig is missing"},
		{name: "not a kubeconfig", data: map[string][]byte{KubeconfigKey: []byte("{{{")}, wantErrContains: "decode kubeconfig"},
		{name: "no current context", data: map[string][]byte{KubeconfigKey: []byte("apiVersion: v1\nkind: Config\n")}, wantErrContains: "no current context"},
		{
			name: "token file that is a key of the Secret",
			data: map[string][]byte{"token": []byte("secret-token"), KubeconfigKey: kubeconfigBytes(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
				u.Token, u.TokenFile = "", "/var/run/managed/token"
			})},
			wantHost: "https://127.0.0.1:6443",
		},
		{
			name: "certificate file",
			data: map[string][]byte{KubeconfigKey: kubeconfigBytes(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
				u.Token, u.ClientCertificate, u.ClientKey = "", "/home/me/client.crt", "/home/me/client.key"
			})},
			wantErrContains: "/home/me/client.crt (client-certificate), which is not a key of the Secret",
		},
		{
			name: "CA file",
			data: map[string][]byte{KubeconfigKey: kubeconfigBytes(t, func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
				c.CertificateAuthorityData, c.CertificateAuthority = nil, "/etc/ca.crt"
			})},
			wantErrContains: "/etc/ca.crt",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := managedClusterConfig(tt.data, "klusterlet-c1/external-managed-kubeconfig")
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				assert.ErrorContains(t, err, "klusterlet-c1/external-managed-kubeconfig", "the error names the Secret")
				return
			}
			require.NoError(t, err)
			if cfg.Host != tt.wantHost || cfg.BearerToken != "secret-token" {
				t.Errorf("host %q token %q, want %q with the Secret's token", cfg.Host, cfg.BearerToken, tt.wantHost)
			}
		})
	}
}
