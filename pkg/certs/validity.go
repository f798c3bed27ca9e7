package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// Rotation thresholds: a certificate is renewed once less than a random
// fraction between these bounds of its lifetime remains (OCM's jitter(0.2, 0.25)).
const (
	// MinRotationFraction is the smallest remaining-life fraction that triggers rotation.
	MinRotationFraction = 0.20
	// MaxRotationFraction is the largest remaining-life fraction that triggers rotation.
	MaxRotationFraction = 0.25
)

// ValidateClientCertificate checks that the PEM certificate certPEM and the
// PEM key keyPEM form a pair, that the certificate is valid at now, and that
// its subject is subject. It returns the leaf certificate.
func ValidateClientCertificate(certPEM, keyPEM []byte, subject pkix.Name, now time.Time) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	leaf := certs[0]
	key, err := ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeyEqual(key.Public(), leaf.PublicKey) {
		return nil, errors.New("the private key does not match the certificate")
	}
	if now.Before(leaf.NotBefore) {
		return nil, fmt.Errorf("the certificate is not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if !now.Before(leaf.NotAfter) {
		return nil, fmt.Errorf("the certificate expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if !SubjectEqual(leaf.Subject, subject) {
		return nil, fmt.Errorf("the certificate is for %q (groups %v), not %q (groups %v)",
			leaf.Subject.CommonName, leaf.Subject.Organization, subject.CommonName, subject.Organization)
	}
	return leaf, nil
}

// RotationFraction returns a random remaining-life fraction in
// [MinRotationFraction, MaxRotationFraction) below which a certificate is
// rotated. The randomness spreads the renewals of many agents.
func RotationFraction() float64 {
	return MinRotationFraction + rand.Float64()*(MaxRotationFraction-MinRotationFraction) //nolint:gosec // jitter, not security
}

// RotationTime returns when cert should be rotated: when the remaining
// fraction of its lifetime drops below fraction.
func RotationTime(cert *x509.Certificate, fraction float64) time.Time {
	total := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotAfter.Add(-time.Duration(float64(total) * fraction))
}

// NeedsRotation reports whether less than fraction of cert's lifetime
// remains at now.
func NeedsRotation(cert *x509.Certificate, now time.Time, fraction float64) bool {
	return !now.Before(RotationTime(cert, fraction))
}
