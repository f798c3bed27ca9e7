package hubsession

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

func TestParse(t *testing.T) {
	hub := &kubeconfig.Info{Server: "https://hub.example:6443", CAData: []byte("ca")}
	data, err := kubeconfig.HubCredentialData(hub, "c1", "a1", []byte("cert"), []byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	kc := data[kubeconfig.KubeconfigKey]
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "agent", Name: "hub-kubeconfig-secret"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	fileKC := `apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "https://hub.example:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {client-certificate: /var/run/hub/tls.crt, client-key: /var/run/hub/tls.key}}]
contexts: [{name: c, context: {cluster: hub, user: u}}]
current-context: c
`
	tests := []struct {
		name        string
		data        map[string]string
		clusterName string
		wantCluster string
		wantCert    string
		wantErr     string
	}{
		{name: "registration agent's Secret", data: map[string]string{"kubeconfig": string(kc), "cluster-name": "c1", "agent-name": "a1"}, wantCluster: "c1", wantCert: "cert"},
		{name: "flag overrides cluster name", data: map[string]string{"kubeconfig": string(kc), "cluster-name": "c1"}, clusterName: "c2", wantCluster: "c2", wantCert: "cert"},
		{name: "OCM-style file references", data: map[string]string{"kubeconfig": fileKC, "tls.crt": "filecert", "tls.key": "filekey", "cluster-name": "c1"}, wantCluster: "c1", wantCert: "filecert"},
		{name: "file outside the Secret", data: map[string]string{"kubeconfig": fileKC, "tls.crt": "filecert", "cluster-name": "c1"}, wantErr: "names file /var/run/hub/tls.key (client-key), which is not a key of the Secret"},
		{name: "no kubeconfig", data: map[string]string{"cluster-name": "c1"}, wantErr: "secret agent/hub-kubeconfig-secret: key kubeconfig is missing"},
		{name: "no cluster name", data: map[string]string{"kubeconfig": string(kc)}, wantErr: "no cluster name"},
		{name: "garbage", data: map[string]string{"kubeconfig": "{{", "cluster-name": "c1"}, wantErr: "kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := Parse(secret(tt.data), tt.clusterName)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cred.ClusterName != tt.wantCluster || string(cred.Config.CertData) != tt.wantCert || cred.Config.Host != "https://hub.example:6443" || cred.Hub.Server != cred.Config.Host {
				t.Errorf("credential = cluster %q cert %q host %q", cred.ClusterName, cred.Config.CertData, cred.Config.Host)
			}
		})
	}

	a, _ := Parse(secret(map[string]string{"kubeconfig": string(kc), "cluster-name": "c1", "agent-name": "a1"}), "")
	b, _ := Parse(secret(map[string]string{"kubeconfig": string(kc), "cluster-name": "c1", "agent-name": "a2"}), "")
	c, _ := Parse(secret(map[string]string{"kubeconfig": string(kc), "cluster-name": "c1", "agent-name": "a1"}), "")
	if a.Fingerprint == b.Fingerprint || a.Fingerprint != c.Fingerprint {
		t.Error("fingerprint does not follow the Secret's content")
	}
}

// TestParseToken checks that a token credential's Config sends the current
// token, that a refreshed token keeps the fingerprint, and that setting it
// changes what the same Config sends.
func TestParseToken(t *testing.T) {
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	}))
	defer srv.Close()
	hub := &kubeconfig.Info{Server: srv.URL, CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	secret := func(token string) *corev1.Secret {
		data, err := kubeconfig.TokenCredentialData(hub, "c1", "a1", []byte(token))
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "agent", Name: "hub-kubeconfig-secret"}, Data: data}
	}
	first, err := Parse(secret("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := Parse(secret("two"), "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Fingerprint != second.Fingerprint || first.token == nil {
		t.Fatalf("a refreshed token changed the fingerprint (%s, %s) or is not tracked", first.Fingerprint, second.Fingerprint)
	}
	cs, err := kubernetes.NewForConfig(first.Config)
	if err != nil {
		t.Fatal(err)
	}
	get := func() {
		t.Helper()
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	get()
	// What Run does when the Secret's token changes.
	first.token.set(*second.token.v.Load())
	get()
	if want := []string{"Bearer one", "Bearer two"}; !slices.Equal(got, want) {
		t.Errorf("the hub saw %v, want %v", got, want)
	}
}
