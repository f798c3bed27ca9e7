package certs

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// selfSigned returns a PEM certificate for subject and key, valid from
// notBefore to notAfter.
func selfSigned(t *testing.T, key crypto.Signer, subject pkix.Name, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestAgentSubject(t *testing.T) {
	s := AgentSubject("c1", "abcde")
	if s.CommonName != "system:open-cluster-management:c1:abcde" {
		t.Errorf("CN = %q", s.CommonName)
	}
	want := []string{"system:open-cluster-management:c1", "system:open-cluster-management:managed-clusters"}
	if strings.Join(s.Organization, ",") != strings.Join(want, ",") {
		t.Errorf("O = %v, want %v", s.Organization, want)
	}
}

func TestCSRMatches(t *testing.T) {
	key, _, err := NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := NewPrivateKey()
	subject := AgentSubject("c1", "a")
	csr, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    []byte
		key     crypto.Signer
		subject pkix.Name
		want    bool
	}{
		{"same key and subject", csr, key, AgentSubject("c1", "a"), true},
		{"organizations in another order", csr, key, pkix.Name{CommonName: "system:open-cluster-management:c1:a",
			Organization: []string{"system:open-cluster-management:managed-clusters", "system:open-cluster-management:c1"}}, true},
		{"other key", csr, other, AgentSubject("c1", "a"), false},
		{"other agent", csr, key, AgentSubject("c1", "b"), false},
		{"garbage", []byte("x"), key, AgentSubject("c1", "a"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CSRMatches(tt.data, tt.key, tt.subject); got != tt.want {
				t.Errorf("CSRMatches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidateClientCertificate(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	key, keyPEM, _ := NewPrivateKey()
	_, otherKeyPEM, _ := NewPrivateKey()
	subject := AgentSubject("c1", "a")
	valid := selfSigned(t, key, subject, now.Add(-time.Hour), now.Add(time.Hour))
	tests := []struct {
		name            string
		cert, key       []byte
		subject         pkix.Name
		wantErrContains string
	}{
		{name: "valid", cert: valid, key: keyPEM, subject: subject},
		{name: "expired", cert: selfSigned(t, key, subject, now.Add(-2*time.Hour), now.Add(-time.Hour)), key: keyPEM, subject: subject, wantErrContains: "expired"},
		{name: "not yet valid", cert: selfSigned(t, key, subject, now.Add(time.Hour), now.Add(2*time.Hour)), key: keyPEM, subject: subject, wantErrContains: "not valid before"},
		{name: "other subject", cert: valid, key: keyPEM, subject: AgentSubject("c2", "a"), wantErrContains: "not \"system:open-cluster-management:c2:a\""},
		{name: "key mismatch", cert: valid, key: otherKeyPEM, subject: subject, wantErrContains: "does not match"},
		{name: "garbage certificate", cert: []byte("garbage"), key: keyPEM, subject: subject, wantErrContains: "parse certificate"},
		{name: "garbage key", cert: valid, key: []byte("garbage"), subject: subject, wantErrContains: "parse private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ValidateClientCertificate(tt.cert, tt.key, tt.subject, now)
			if tt.wantErrContains == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErrContains)
		})
	}
}

func TestRotation(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: start, NotAfter: start.Add(100 * time.Hour)}
	tests := []struct {
		name     string
		elapsed  time.Duration
		fraction float64
		want     bool
	}{
		{"fresh", time.Hour, 0.2, false},
		{"just before 80 %", 79*time.Hour + 59*time.Minute, 0.2, false},
		{"at 80 %", 80 * time.Hour, 0.2, true},
		{"75 % with the largest fraction", 75 * time.Hour, 0.25, true},
		{"75 % with the smallest fraction", 75 * time.Hour, 0.2, false},
		{"expired", 101 * time.Hour, 0.2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsRotation(cert, start.Add(tt.elapsed), tt.fraction); got != tt.want {
				t.Errorf("NeedsRotation after %s with fraction %v = %v, want %v", tt.elapsed, tt.fraction, got, tt.want)
			}
		})
	}
	for range 1000 {
		if f := RotationFraction(); f < MinRotationFraction || f >= MaxRotationFraction {
			t.Fatalf("RotationFraction() = %v, want it in [%v, %v)", f, MinRotationFraction, MaxRotationFraction)
		}
	}
}

func TestParsePrivateKey(t *testing.T) {
	ecKey, ecPEM, err := NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM, err := keyutil.MarshalPrivateKeyToPEM(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8DER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8PEM := pem.EncodeToMemory(&pem.Block{Type: keyutil.PrivateKeyBlockType, Bytes: pkcs8DER})
	certPEM := selfSigned(t, ecKey, AgentSubject("c1", "a"), time.Now(), time.Now().Add(time.Hour))
	tests := []struct {
		name    string
		data    []byte
		want    crypto.PublicKey
		wantErr bool
	}{
		{name: "EC, as generated", data: ecPEM, want: ecKey.Public()},
		{name: "PKCS#1 RSA", data: rsaPEM, want: rsaKey.Public()},
		{name: "PKCS#8", data: pkcs8PEM, want: ecKey.Public()},
		{name: "after a certificate", data: append(slices.Clone(certPEM), ecPEM...), want: ecKey.Public()},
		{name: "certificate only", data: certPEM, wantErr: true},
		{name: "garbage", data: []byte("garbage"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePrivateKey(tt.data)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePrivateKey() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && !publicKeyEqual(got.Public(), tt.want) {
				t.Error("ParsePrivateKey() returned another key")
			}
		})
	}
}
