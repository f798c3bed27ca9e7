package agent

import (
	"strings"
	"testing"

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

func TestSpokeConfig(t *testing.T) {
	tests := []struct {
		name            string
		data            map[string][]byte
		wantHost        string
		wantErrContains string
	}{
		{name: "embedded credentials", data: map[string][]byte{KubeconfigKey: kubeconfigBytes(t, nil)}, wantHost: "https://127.0.0.1:6443"},
		{name: "no key", data: map[string][]byte{"config": kubeconfigBytes(t, nil)}, wantErrContains: "has no key kubeconfig"},
		{name: "empty Secret", data: nil, wantErrContains: "has no key kubeconfig"},
		{name: "not a kubeconfig", data: map[string][]byte{KubeconfigKey: []byte("{{{")}, wantErrContains: "not a usable kubeconfig"},
		{name: "no current context", data: map[string][]byte{KubeconfigKey: []byte("apiVersion: v1\nkind: Config\n")}, wantErrContains: "not a usable kubeconfig"},
		{
			name: "certificate file",
			data: map[string][]byte{KubeconfigKey: kubeconfigBytes(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
				u.Token, u.ClientCertificate, u.ClientKey = "", "/home/me/client.crt", "/home/me/client.key"
			})},
			wantErrContains: "embed their contents",
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
			cfg, err := spokeConfig(tt.data, "klusterlet-c1/external-managed-kubeconfig")
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErrContains)
				}
				if !strings.Contains(err.Error(), "klusterlet-c1/external-managed-kubeconfig") {
					t.Errorf("error %q does not name the Secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost {
				t.Errorf("host = %q, want %q", cfg.Host, tt.wantHost)
			}
		})
	}
}

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
