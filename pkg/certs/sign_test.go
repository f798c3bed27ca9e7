package certs

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
)

// testCA returns the PEM certificate and key of a CA valid from notBefore
// to notAfter; isCA false makes a plain certificate.
func testCA(t *testing.T, isCA bool, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, key crypto.Signer) {
	t.Helper()
	key, keyPEM, err := NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signer-ca"},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, key
}

func TestParseCA(t *testing.T) {
	now := time.Now()
	caPEM, caKey, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	leafPEM, leafKey, _ := testCA(t, false, now.Add(-time.Hour), now.Add(time.Hour))
	_, otherKey, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	tests := []struct {
		name        string
		cert, key   []byte
		wantErrText string
	}{
		{"CA", caPEM, caKey, ""},
		{"not a CA", leafPEM, leafKey, "is not a CA"},
		{"key of another CA", caPEM, otherKey, "does not match"},
		{"no certificate", nil, caKey, "parse the CA certificate"},
		{"no key", caPEM, []byte("garbage"), "the CA's key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCA(tt.cert, tt.key)
			if tt.wantErrText == "" {
				require.NoError(t, err, "ParseCA")
				return
			}
			assert.ErrorContains(t, err, tt.wantErrText)
		})
	}
}

func TestIssueClientCertificate(t *testing.T) {
	now := time.Now()
	clientUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	subject := pkix.Name{CommonName: "addon-user", Organization: []string{"g1", "g2"}, OrganizationalUnit: []string{"ou"}}
	p, err := NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	csrPEM, err := certutil.MakeCSR(p.Key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		caNotAfter  time.Time
		csr         []byte
		usages      []certificatesv1.KeyUsage
		lifetime    time.Duration
		wantExpiry  time.Time
		wantErrText string
	}{
		{"default lifetime", now.Add(365 * 24 * time.Hour), csrPEM, clientUsages, 0, now.Add(DefaultIssuedLifetime), ""},
		{"requested lifetime", now.Add(365 * 24 * time.Hour), csrPEM, clientUsages, time.Hour, now.Add(time.Hour), ""},
		{"capped at the CA's expiry", now.Add(2 * time.Hour), csrPEM, clientUsages, 0, now.Add(2 * time.Hour), ""},
		{"expired CA", now.Add(-time.Minute), csrPEM, clientUsages, 0, time.Time{}, "expired"},
		{"server auth", now.Add(time.Hour), csrPEM, append(clientUsages, certificatesv1.UsageServerAuth), 0, time.Time{}, `usage "server auth"`},
		{"no client auth", now.Add(time.Hour), csrPEM, clientUsages[:2], 0, time.Time{}, "lack"},
		{"not a request", now.Add(time.Hour), []byte("x"), clientUsages, 0, time.Time{}, "request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caPEM, caKeyPEM, _ := testCA(t, true, now.Add(-48*time.Hour), tt.caNotAfter)
			ca, err := ParseCA(caPEM, caKeyPEM)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ca.IssueClientCertificate(tt.csr, tt.usages, tt.lifetime, now)
			if tt.wantErrText != "" {
				require.ErrorContains(t, err, tt.wantErrText)
				return
			}
			if err != nil {
				t.Fatalf("IssueClientCertificate: %v", err)
			}
			leaf, err := ValidateClientCertificate(got, p.KeyPEM, subject, now)
			if err != nil {
				t.Fatalf("the issued certificate is not a client certificate of the request: %v", err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca.Cert)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("the issued certificate does not chain to the CA for client auth: %v", err)
			}
			if d := leaf.NotAfter.Sub(tt.wantExpiry); d < -time.Second || d > time.Second {
				t.Errorf("NotAfter = %s, want %s", leaf.NotAfter, tt.wantExpiry)
			}
		})
	}
}
