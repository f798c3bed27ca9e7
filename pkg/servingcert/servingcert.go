package servingcert

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// Keys of the Secret's data.
const (
	// CABundleKey holds the PEM CA bundle clients trust.
	CABundleKey = "ca.crt"
	// CAKeyKey holds the PEM private key of the current signer.
	CAKeyKey = "ca.key"
	// CertKey holds the PEM serving certificate (corev1.TLSCertKey).
	CertKey = "tls.crt"
	// KeyKey holds the PEM key of the serving certificate (corev1.TLSPrivateKeyKey).
	KeyKey = "tls.key"
)

// Default lifetimes.
const (
	// DefaultCAValidity is the lifetime of a new CA.
	DefaultCAValidity = 365 * 24 * time.Hour
	// DefaultServingValidity is the lifetime of a new serving certificate.
	DefaultServingValidity = 30 * 24 * time.Hour
)

// Options say what to keep.
type Options struct {
	// CommonName names the CA ("<CommonName>-ca@<unix time>") and the serving
	// certificate.
	CommonName string
	// Hosts are the DNS names and IP addresses the serving certificate must
	// be valid for.
	Hosts []string
	// CAValidity is the lifetime of a new CA. Default: DefaultCAValidity.
	CAValidity time.Duration
	// ServingValidity is the lifetime of a new serving certificate, capped
	// by its CA's expiry. Default: DefaultServingValidity.
	ServingValidity time.Duration
	// RotationFraction: a certificate is renewed once less than this
	// fraction of its lifetime remains. Default: certs.MinRotationFraction.
	RotationFraction float64
}

func (o Options) withDefaults() Options {
	if o.CAValidity <= 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.ServingValidity <= 0 {
		o.ServingValidity = DefaultServingValidity
	}
	if o.RotationFraction <= 0 || o.RotationFraction >= 1 {
		o.RotationFraction = certs.MinRotationFraction
	}
	return o
}

// Result is what Plan decided.
type Result struct {
	// Data is what the Secret must hold.
	Data map[string][]byte
	// Changed reports whether Data differs from the Secret's data.
	Changed bool
	// Next is when Plan must run again: the earliest rotation or expiry.
	Next time.Time
	// Serving is the serving certificate with its key, ready for a TLS server.
	Serving *tls.Certificate
}

// Plan returns what a Secret holding data must hold at now under opts.
func Plan(data map[string][]byte, opts Options, now time.Time) (*Result, error) {
	opts = opts.withDefaults()
	out := map[string][]byte{}
	for k, v := range data {
		out[k] = v
	}
	bundle, signer, signerKey := parseCA(data)
	if signer == nil || certs.NeedsRotation(signer, now, opts.RotationFraction) {
		cert, keyPEM, key, err := newCA(opts, now)
		if err != nil {
			return nil, err
		}
		signer, signerKey = cert, key
		bundle = append([]*x509.Certificate{cert}, bundle...)
		out[CAKeyKey] = keyPEM
	}
	bundle = slices.DeleteFunc(bundle, func(c *x509.Certificate) bool { return !now.Before(c.NotAfter) })
	caPEM, err := certutil.EncodeCertificates(bundle...)
	if err != nil {
		return nil, fmt.Errorf("encode the CA bundle: %w", err)
	}
	out[CABundleKey] = caPEM
	if !servingValid(data, bundle, opts, now) {
		certPEM, keyPEM, err := newServing(opts, signer, signerKey, now)
		if err != nil {
			return nil, err
		}
		out[CertKey], out[KeyKey] = certPEM, keyPEM
	}
	pair, err := tls.X509KeyPair(out[CertKey], out[KeyKey])
	if err != nil {
		return nil, fmt.Errorf("load the serving certificate: %w", err)
	}
	res := &Result{Data: out, Serving: &pair, Next: certs.RotationTime(signer, opts.RotationFraction)}
	if serving, err := x509.ParseCertificate(pair.Certificate[0]); err == nil {
		res.Next = earliest(res.Next, certs.RotationTime(serving, opts.RotationFraction))
	}
	for _, ca := range bundle[1:] {
		res.Next = earliest(res.Next, ca.NotAfter)
	}
	for _, k := range []string{CABundleKey, CAKeyKey, CertKey, KeyKey} {
		if !bytes.Equal(data[k], out[k]) {
			res.Changed = true
		}
	}
	return res, nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// parseCA returns the bundle of data and its first certificate with the key
// of ca.key when they form a pair; signer is nil otherwise.
func parseCA(data map[string][]byte) (bundle []*x509.Certificate, signer *x509.Certificate, key crypto.Signer) {
	bundle, err := certutil.ParseCertsPEM(data[CABundleKey])
	if err != nil || len(bundle) == 0 {
		return nil, nil, nil
	}
	key, err = certs.ParsePrivateKey(data[CAKeyKey])
	if err != nil || !samePublicKey(key.Public(), bundle[0].PublicKey) {
		return bundle, nil, nil
	}
	return bundle, bundle[0], key
}

func samePublicKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// servingValid reports whether data's serving certificate can be kept: it
// pairs with its key, chains to a CA of bundle, names every host and is not
// due for rotation.
func servingValid(data map[string][]byte, bundle []*x509.Certificate, opts Options, now time.Time) bool {
	pair, err := tls.X509KeyPair(data[CertKey], data[KeyKey])
	if err != nil {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || certs.NeedsRotation(leaf, now, opts.RotationFraction) {
		return false
	}
	pool := x509.NewCertPool()
	for _, ca := range bundle {
		pool.AddCert(ca)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return false
	}
	for _, h := range opts.Hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// newCA returns a self-signed CA valid from now for opts.CAValidity.
func newCA(opts Options, now time.Time) (*x509.Certificate, []byte, crypto.Signer, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", opts.CommonName, now.Unix())},
		NotBefore:             now.Add(-skew(opts.CAValidity)),
		NotAfter:              now.Add(opts.CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create the CA: %w", err)
	}
	return cert, keyPEM, key, nil
}

// newServing returns a serving certificate for opts.Hosts signed by ca.
func newServing(opts Options, ca *x509.Certificate, caKey crypto.Signer, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return nil, nil, err
	}
	notAfter := now.Add(opts.ServingValidity)
	if ca.NotAfter.Before(notAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: opts.CommonName},
		NotBefore:   now.Add(-skew(opts.ServingValidity)),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range opts.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	cert, err := sign(tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create the serving certificate: %w", err)
	}
	certPEM, err = certutil.EncodeCertificates(cert)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the serving certificate: %w", err)
	}
	return certPEM, keyPEM, nil
}

// skew is how far before now a certificate of lifetime validity starts, for
// clocks behind this one: a minute, or a tenth of a shorter lifetime.
func skew(validity time.Duration) time.Duration {
	return min(time.Minute, validity/10)
}

// sign creates tmpl with a random serial number, signed by parent's key.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// Verify checks that the PEM CA bundle caBundle trusts the PEM serving
// certificate certPEM for host at now, and returns the certificate.
func Verify(caBundle, certPEM []byte, host string, now time.Time) (*x509.Certificate, error) {
	chain, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parse the serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("the CA bundle holds no certificate")
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return chain[0], err
	}
	return chain[0], nil
}

// ServiceHosts are the DNS names of Service name in namespace that a
// serving certificate for it holds: the short name, with the namespace,
// .svc and .svc.cluster.local.
func ServiceHosts(name, namespace string) []string {
	return []string{
		name,
		name + "." + namespace,
		name + "." + namespace + ".svc",
		name + "." + namespace + ".svc.cluster.local",
	}
}
