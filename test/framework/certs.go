package framework

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// certValidity is how long every certificate the framework issues stays valid.
// Environments live for minutes to days; a year is plenty and never rotates mid-run.
const certValidity = 365 * 24 * time.Hour

// authority is a certificate authority with its private key, used per cluster
// to sign the API server's serving certificate, client certificates and (through
// kube-controller-manager) approved CSRs.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// keyPair is a PEM-encoded certificate and private key.
type keyPair struct {
	certPEM []byte
	keyPEM  []byte
}

// newAuthority creates a self-signed CA named commonName.
func newAuthority(commonName string) (*authority, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return nil, err
	}
	caCert, err := cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA %s: %w", commonName, err)
	}
	return &authority{cert: caCert, key: key, certPEM: encodeCert(caCert.Raw), keyPEM: keyPEM}, nil
}

// issue signs a new leaf certificate. A certificate with IPs or DNS names is a
// serving certificate; without, a client certificate for user in groups.
func (a *authority) issue(user string, groups []string, ips []net.IP, dnsNames []string) (keyPair, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses:  ips,
		DNSNames:     dnsNames,
	}
	if len(ips) > 0 || len(dnsNames) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign certificate for %s: %w", user, err)
	}
	return keyPair{certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pool returns a certificate pool holding only this authority.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}
