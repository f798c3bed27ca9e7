package kubeconfig

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/stretchr/testify/require"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

var testNow = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// issue returns a PEM certificate for subject, valid until notAfter, and its
// PEM private key.
func issue(t *testing.T, subject pkix.Name, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject, NotBefore: testNow.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
}

func TestHubCredentialData(t *testing.T) {
	hub := &Info{Server: "https://hub:6443", CAData: []byte("CA"), ProxyURL: "http://proxy:3128", Token: "bootstrap-token"}
	data, err := HubCredentialData(hub, "c1", "a1", []byte("CERT"), []byte("KEY"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{TLSCertKey: "CERT", TLSKeyKey: "KEY", ClusterNameKey: "c1", AgentNameKey: "a1"}
	for key, value := range want {
		if string(data[key]) != value {
			t.Errorf("key %s = %q, want %q", key, data[key], value)
		}
	}
	kc, err := clientcmd.Load(data[KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != HubContextName || kc.Contexts[HubContextName].AuthInfo != HubUserName {
		t.Errorf("context %q user %q, want OCM's %s and %s", kc.CurrentContext, kc.Contexts[kc.CurrentContext].AuthInfo, HubContextName, HubUserName)
	}
	cred, err := ReadHubCredential(data)
	if err != nil {
		t.Fatal(err)
	}
	if !SameHub(cred.Kubeconfig, hub) || cred.Kubeconfig.Token != "" || cred.ClusterName != "c1" || cred.AgentName != "a1" {
		t.Errorf("ReadHubCredential = %+v, kubeconfig %+v; want the hub's server, CA and proxy without the bootstrap token", cred, cred.Kubeconfig)
	}
	if _, err := HubCredentialData(&Info{}, "c1", "a1", []byte("CERT"), []byte("KEY")); err == nil {
		t.Error("HubCredentialData without a server succeeded")
	}
}

func TestHubCredentialValidate(t *testing.T) {
	subject := certs.AgentSubject("c1", "a1")
	hub := &Info{Server: "https://hub:6443", CAData: []byte("CA")}
	certPEM, keyPEM := issue(t, subject, testNow.Add(time.Hour))
	otherCert, otherKey := issue(t, subject, testNow.Add(time.Hour))
	expiredCert, expiredKey := issue(t, subject, testNow.Add(-time.Minute))
	// data returns the Secret data of a credential, changed by change.
	data := func(certPEM, keyPEM []byte, change func(map[string][]byte)) map[string][]byte {
		d, err := HubCredentialData(hub, "c1", "a1", certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		if change != nil {
			change(d)
		}
		return d
	}
	ocmKubeconfig := []byte(kubeconfigYAML(`{server: "https://hub:6443", certificate-authority-data: Q0E=}`, `{client-certificate: tls.crt, client-key: tls.key}`))
	tests := []struct {
		name            string
		data            map[string][]byte
		subject         pkix.Name
		wantErrContains string
	}{
		{name: "valid", data: data(certPEM, keyPEM, nil), subject: subject},
		{name: "OCM's kubeconfig naming tls.crt and tls.key", data: data(certPEM, keyPEM, func(d map[string][]byte) { d[KubeconfigKey] = ocmKubeconfig }), subject: subject},
		{name: "no certificate", data: data(certPEM, keyPEM, func(d map[string][]byte) { delete(d, TLSCertKey) }), subject: subject, wantErrContains: "key tls.crt is missing"},
		{name: "no key", data: data(certPEM, keyPEM, func(d map[string][]byte) { delete(d, TLSKeyKey) }), subject: subject, wantErrContains: "key tls.key is missing"},
		{name: "corrupted certificate", data: data(certPEM, keyPEM, func(d map[string][]byte) { d[TLSCertKey] = []byte("garbage") }), subject: subject, wantErrContains: "parse certificate"},
		{name: "expired", data: data(expiredCert, expiredKey, nil), subject: subject, wantErrContains: "expired"},
		{name: "another identity", data: data(certPEM, keyPEM, nil), subject: certs.AgentSubject("c2", "a1"), wantErrContains: `not "system:open-cluster-management:c2:a1"`},
		{name: "kubeconfig with another certificate", data: data(certPEM, keyPEM, func(d map[string][]byte) {
			d[KubeconfigKey], _ = forClientCertificate(hub, otherCert, otherKey)
		}), subject: subject, wantErrContains: "does not authenticate with the certificate and key of tls.crt and tls.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := ReadHubCredential(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := cred.Validate(tt.subject, testNow)
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				return
			}
			require.NoError(t, err)
			if cert.Subject.CommonName != subject.CommonName {
				t.Fatalf("Validate = %v, %v; want the certificate of %s", cert, err, subject.CommonName)
			}
		})
	}
}

func TestReadHubCredential(t *testing.T) {
	tests := []struct {
		name            string
		data            map[string][]byte
		wantErrContains string
	}{
		{name: "no kubeconfig", data: map[string][]byte{TLSCertKey: []byte("CERT"), TLSKeyKey: []byte("KEY")}, wantErrContains: "key kubeconfig is missing"},
		{name: "kubeconfig naming a file outside the Secret", data: map[string][]byte{
			KubeconfigKey: []byte(kubeconfigYAML(`{server: "https://hub"}`, `{client-certificate: /home/me/me.crt, client-key: tls.key}`)),
			TLSKeyKey:     []byte("KEY"),
		}, wantErrContains: "names file /home/me/me.crt (client-certificate), which is not a key of the Secret"},
		{name: "identity keys may be missing", data: map[string][]byte{
			KubeconfigKey: []byte(kubeconfigYAML(`{server: "https://hub"}`, `{token: t}`)),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := ReadHubCredential(tt.data)
			if tt.wantErrContains != "" {
				require.ErrorContains(t, err, tt.wantErrContains)
				return
			}
			require.NoError(t, err)
			if cred.ClusterName != "" || cred.AgentName != "" || cred.Kubeconfig.Server != "https://hub" {
				t.Fatalf("ReadHubCredential = %+v", cred)
			}
		})
	}
}

func TestAddonCredentialData(t *testing.T) {
	hub := &Info{Server: "https://hub:6443", CAData: []byte("CA")}
	subject := certs.AddonSubject("c1", "helloworld", addonv1alpha1.Subject{})
	certPEM, keyPEM := issue(t, subject, testNow.Add(time.Hour))
	data, err := AddonCredentialData(hub, "c1", "helloworld", certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if string(data[AddonNameKey]) != "helloworld" || string(data[ClusterNameKey]) != "c1" {
		t.Errorf("add-on and cluster keys = %q, %q", data[AddonNameKey], data[ClusterNameKey])
	}
	cred, err := ReadHubCredential(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cred.Validate(subject, testNow); err != nil || !SameHub(cred.Kubeconfig, hub) {
		t.Errorf("the add-on credential is not usable for its subject on the hub: %v", err)
	}
}

func TestPendingRequestData(t *testing.T) {
	p, err := certs.NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	p.CSRName = "csr-1"
	data := PendingRequestData("c1", "a1", p)
	tests := []struct {
		name           string
		data           map[string][]byte
		cluster, agent string
		wantCSR        string
		wantNil        bool
	}{
		{name: "same identity", data: data, cluster: "c1", agent: "a1", wantCSR: "csr-1"},
		{name: "another agent", data: data, cluster: "c1", agent: "a2", wantNil: true},
		{name: "another cluster", data: data, cluster: "c2", agent: "a1", wantNil: true},
		{name: "no Secret", cluster: "c1", agent: "a1", wantNil: true},
		{name: "identity only", data: PendingRequestData("c1", "a1", nil), cluster: "c1", agent: "a1", wantNil: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReadPendingRequest(tt.data, tt.cluster, tt.agent)
			if tt.wantNil {
				if got != nil {
					t.Errorf("ReadPendingRequest = %+v, want nil", got)
				}
				return
			}
			if got == nil || got.CSRName != tt.wantCSR || !got.Key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(p.Key.Public()) {
				t.Errorf("ReadPendingRequest = %+v, want the saved key and request %s", got, tt.wantCSR)
			}
		})
	}
}
