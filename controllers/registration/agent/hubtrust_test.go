package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// TestUpdateHubTrustStartsFromTheSecret shows that the trust the agent
// updates is the one its hub kubeconfig Secret holds, not the one of its
// connection, which takes up a written trust only at the credential loop's
// next check: a CA added to the Secret a moment ago, while the connection
// still trusts the hub's CA alone, is dropped when the hub's bundle drops
// it.
func TestUpdateHubTrustStartsFromTheSecret(t *testing.T) {
	hub := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(hub.Close)
	hubCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hub.Certificate().Raw})
	extra := newTestCA(t)
	id := identity{cluster: "c1", agentID: "abcde"}

	secretFor := func(name string, trusted []byte) *corev1.Secret {
		data := credentialData(t, id, hub.URL, testNow.AddDate(1, 0, 0))
		data, err := kubeconfig.WithCAData(data, trusted)
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "agent", Name: name}, Data: data}
	}
	mgmt := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(
		secretFor("hub-kubeconfig-secret", slices.Concat(hubCA, extra)),
		secretFor("bootstrap-hub-kubeconfig", slices.Concat(hubCA, extra)),
	).Build()
	a := &Agent{
		opts:       Options{Namespace: "agent", HubKubeconfigSecret: "hub-kubeconfig-secret", BootstrapKubeconfigSecrets: []string{"bootstrap-hub-kubeconfig"}},
		mgmt:       mgmt,
		mgmtReader: mgmt,
	}
	if err := a.updateHubTrust(context.Background(), string(hubCA)); err != errNotConnected {
		t.Fatalf("without a connection: got %v, want errNotConnected", err)
	}

	// The connection was made before the extra CA was written.
	stale := &kubeconfig.Info{Server: hub.URL, CAData: hubCA}
	cfg, err := stale.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	a.conn = &hubConnection{cred: &hubCredential{config: cfg, hub: stale}}
	if err := a.updateHubTrust(context.Background(), string(hubCA)); err != nil {
		t.Fatal(err)
	}
	want := certs.HubCAsClaimValue(hubCA)
	for _, name := range []string{"hub-kubeconfig-secret", "bootstrap-hub-kubeconfig"} {
		s := &corev1.Secret{}
		if err := mgmt.Get(context.Background(), types.NamespacedName{Namespace: "agent", Name: name}, s); err != nil {
			t.Fatal(err)
		}
		info, err := kubeconfig.FromSecret(s.Data)
		if err != nil {
			t.Fatal(err)
		}
		if got := certs.HubCAsClaimValue(info.CAData); got != want {
			t.Errorf("Secret %s trusts %s, want the hub's CA alone (%s)", name, got, want)
		}
	}
}

// newTestCA returns the PEM certificate of a new self-signed CA.
func newTestCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "extra"}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
}
