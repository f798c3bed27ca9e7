package certs

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
)

// Lifetimes of the certificates a CA issues.
const (
	// DefaultIssuedLifetime is the lifetime of a certificate whose request
	// asks for none: one day, as OCM's add-on manager issues custom-signer
	// certificates.
	DefaultIssuedLifetime = 24 * time.Hour
	// MinIssuedLifetime is the shortest lifetime a request may ask for
	// (spec.expirationSeconds), as the Kubernetes signers allow.
	MinIssuedLifetime = 10 * time.Minute
	// issuedBackdate is how far before the signing time a certificate is
	// valid from, so that clocks a little behind accept it at once.
	issuedBackdate = 5 * time.Minute
)

// CA is a certificate authority that issues client certificates: its
// certificate and private key.
type CA struct {
	// Cert is the CA's certificate.
	Cert *x509.Certificate
	// Key is the CA's private key, the pair of Cert's public key.
	Key crypto.Signer
}

// ParseCA reads a CA from its PEM certificate (the first of certPEM) and PEM
// private key (PKCS#1, PKCS#8 or SEC 1), as a kubernetes.io/tls Secret holds
// them under tls.crt and tls.key. The certificate must be a CA whose key
// may sign certificates, and the key its pair.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	chain, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parse the CA certificate: %w", err)
	}
	cert := chain[0]
	if !cert.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA (basic constraints CA:TRUE)", cert.Subject.CommonName)
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("CA certificate %q may not sign certificates (key usage lacks certSign)", cert.Subject.CommonName)
	}
	key, err := ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the CA's key: %w", err)
	}
	if !publicKeyEqual(key.Public(), cert.PublicKey) {
		return nil, errors.New("the CA private key does not match the CA certificate")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// serialLimit bounds the random serial numbers: 128 bits.
var serialLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// IssueClientCertificate signs the PEM certificate request csrPEM with ca
// and returns the PEM certificate: the request's subject and key, the key
// usages and extended key usages of usages (the request's spec.usages), valid
// from shortly before now for lifetime (DefaultIssuedLifetime when zero), and
// never beyond the CA's own expiry. It refuses a request whose signature does
// not verify and a CA that has expired.
func (ca *CA) IssueClientCertificate(csrPEM []byte, usages []certificatesv1.KeyUsage, lifetime time.Duration, now time.Time) ([]byte, error) {
	req, err := ParseCSR(csrPEM)
	if err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature does not verify: %w", err)
	}
	if !now.Before(ca.Cert.NotAfter) {
		return nil, fmt.Errorf("the CA certificate %q expired at %s", ca.Cert.Subject.CommonName, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if lifetime == 0 {
		lifetime = DefaultIssuedLifetime
	}
	keyUsage, extUsages, err := x509Usages(usages)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, serialLimit)
	if err != nil {
		return nil, fmt.Errorf("generate a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.Subject,
		NotBefore:             now.Add(-issuedBackdate),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extUsages,
		BasicConstraintsValid: true,
		AuthorityKeyId:        ca.Cert.SubjectKeyId,
	}
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, req.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign the certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}), nil
}

// x509Usages maps the key usages of a certificate request to those of the
// certificate; a usage a client certificate has no use for is refused.
func x509Usages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var keyUsage x509.KeyUsage
	var ext []x509.ExtKeyUsage
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature:
			keyUsage |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageKeyEncipherment:
			keyUsage |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageClientAuth:
			ext = append(ext, x509.ExtKeyUsageClientAuth)
		default:
			return 0, nil, fmt.Errorf("usage %q is not issued in a client certificate", u)
		}
	}
	if len(ext) == 0 {
		return 0, nil, fmt.Errorf("usages %v lack %q", usages, certificatesv1.UsageClientAuth)
	}
	return keyUsage, ext, nil
}
