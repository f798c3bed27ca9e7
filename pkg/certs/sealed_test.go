package certs

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
)

// tokenCSR returns an approved request of AgentTokenSignerName made with
// key.
func tokenCSR(t *testing.T, key any, name, uid string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	req, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "system:open-cluster-management:c1:a"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: apitypes.UID("uid-" + uid)},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: AgentTokenSignerName},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue},
		}},
	}
}

// TestSealToken checks that a sealed token opens with the request's key only,
// for that request only, and that StateOf reports it issued.
func TestSealToken(t *testing.T) {
	p, err := NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	csr := tokenCSR(t, p.Key, "c1-abc", "1")
	if st := StateOf(csr); st.Phase != RequestPending {
		t.Fatalf("approved request without a sealed token: phase %v, want pending", st.Phase)
	}
	token := []byte("header.payload.signature")
	sealed, err := SealToken(csr, token)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, string(token)) {
		t.Fatal("the sealed token contains the token")
	}
	csr.Annotations = map[string]string{SealedTokenAnnotation: sealed}
	st := StateOf(csr)
	if st.Phase != RequestIssued || st.SealedToken != sealed || st.UID != csr.UID {
		t.Fatalf("StateOf = %+v, want issued with the sealed token", st)
	}
	got, err := OpenToken(st.SealedToken, st.Name, st.UID, p.Key)
	if err != nil || string(got) != string(token) {
		t.Fatalf("OpenToken = %q, %v; want %q", got, err, token)
	}
	other, err := NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenToken(sealed, csr.Name, csr.UID, other.Key); err == nil {
		t.Error("another key opened the sealed token")
	}
	if _, err := OpenToken(sealed, "c1-other", csr.UID, p.Key); err == nil {
		t.Error("the sealed token opened for another request name")
	}
	if _, err := OpenToken(sealed, csr.Name, "uid-2", p.Key); err == nil {
		t.Error("the sealed token opened for another request UID")
	}
	for _, curve := range []elliptic.Curve{elliptic.P384(), elliptic.P521()} {
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		c := tokenCSR(t, k, "c1-curve", "3")
		s, err := SealToken(c, token)
		if err != nil {
			t.Fatalf("%s: %v", curve.Params().Name, err)
		}
		if got, err := OpenToken(s, c.Name, c.UID, k); err != nil || string(got) != string(token) {
			t.Errorf("%s: OpenToken = %q, %v", curve.Params().Name, got, err)
		}
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SealToken(tokenCSR(t, edKey, "c1-ed", "4"), token)
	assert.ErrorContains(t, err, "ECDSA", "SealToken to an Ed25519 key")
}

// TestStateOfTokenRequestIgnoresCertificate checks that a request of the
// token signer is issued by its sealed token, not by a certificate.
func TestStateOfTokenRequestIgnoresCertificate(t *testing.T) {
	p, err := NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	csr := tokenCSR(t, p.Key, "c1-abc", "1")
	csr.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
	if st := StateOf(csr); st.Phase != RequestPending {
		t.Errorf("phase %v, want pending", st.Phase)
	}
}

func TestAgentTokenLifetime(t *testing.T) {
	secs := func(s int32) *int32 { return &s }
	tests := []struct {
		name    string
		seconds *int32
		want    time.Duration
	}{
		{"none asked", nil, DefaultAgentTokenLifetime},
		{"zero", secs(0), DefaultAgentTokenLifetime},
		{"two hours", secs(7200), 2 * time.Hour},
		{"below the TokenRequest minimum", secs(60), MinTokenLifetime},
		{"a year, clamped to a day", secs(365 * 24 * 3600), MaxAgentTokenLifetime},
		{"the int32 maximum", secs(math.MaxInt32), MaxAgentTokenLifetime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AgentTokenLifetime(tt.seconds); got != tt.want {
				t.Errorf("AgentTokenLifetime = %s, want %s", got, tt.want)
			}
		})
	}
}
