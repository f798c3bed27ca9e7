package certs

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HubCABundleConfigMap is the ConfigMap that holds the CAs the hub's
// clients trust (key HubCABundleKey): kube-controller-manager's root CA
// publisher writes it, from its --root-ca-file, into every namespace. An
// agent follows the one in HubCABundleNamespace to learn a new hub serving
// CA before the hub switches to it. It is the bundle Kubernetes' own manual
// CA rotation procedure distributes (old and new CA while both are valid),
// so a hub administrator who follows that procedure rotates the fleet's
// trust with it, on any distribution, with nothing more to run.
//
// Only the copy in HubCABundleNamespace is followed: whoever may edit
// ConfigMaps of a namespace (the built-in edit and admin roles, add-ons
// granted a cluster namespace) may write that namespace's copy, and the
// publisher only reverts it later; no one but the hub's administrators
// writes kube-public.
const (
	HubCABundleConfigMap = "kube-root-ca.crt"
	HubCABundleKey       = "ca.crt"
	HubCABundleNamespace = metav1.NamespacePublic
)

// HubCABundleRef names the hub's CA bundle in messages:
// kube-public/kube-root-ca.crt.
const HubCABundleRef = HubCABundleNamespace + "/" + HubCABundleConfigMap

// ReadHubCABundle reads, through r, the CA bundle the hub publishes
// (HubCABundleNamespace/HubCABundleConfigMap) and returns it as PEM and as
// certificates (HubCABundleOf). The error names the ConfigMap and wraps
// the API server's.
func ReadHubCABundle(ctx context.Context, r client.Reader) ([]byte, []*x509.Certificate, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: HubCABundleNamespace, Name: HubCABundleConfigMap}, cm); err != nil {
		return nil, nil, fmt.Errorf("read the hub's CA bundle, ConfigMap %s: %w", HubCABundleRef, err)
	}
	return HubCABundleOf(cm)
}

// HubCABundleOf returns the CA bundle of cm, a copy of the hub CA bundle
// ConfigMap however it was read, as PEM and as certificates; a bundle
// without a certificate is an error naming cm.
func HubCABundleOf(cm *corev1.ConfigMap) ([]byte, []*x509.Certificate, error) {
	bundle := []byte(cm.Data[HubCABundleKey])
	cs, err := ParseCertificates(bundle)
	if err != nil {
		return nil, nil, fmt.Errorf("the hub's CA bundle, ConfigMap %s/%s key %s: %w", cm.Namespace, cm.Name, HubCABundleKey, err)
	}
	return bundle, cs, nil
}

// ParseCertificates reads every CERTIFICATE block of a PEM bundle; an empty
// bundle is an error, as is a block that does not parse.
func ParseCertificates(bundle []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d of the bundle: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate in the bundle")
	}
	return out, nil
}

// Fingerprint is the hex SHA-256 of a certificate's DER, as `openssl x509
// -fingerprint -sha256` prints it without colons.
func Fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// TrustUpdate is the CA bundle an agent should trust for its hub after
// looking at what the hub publishes (UpdateTrust).
type TrustUpdate struct {
	// Trusted is the new bundle, PEM; Changed says whether it differs from
	// the bundle trusted before.
	Trusted []byte
	Changed bool
	// Added and Dropped are the fingerprints of the CAs added and dropped.
	Added, Dropped []string
}

// UpdateTrust computes the CA bundle an agent trusts for its hub from the
// bundle it trusts now and the bundle the hub publishes now: every
// published CA is trusted from now on, and a trusted CA that the hub does
// not publish stays as long as servesHub reports that it verifies the
// certificate the hub serves now. So a CA the agent was given some other
// way (join's CA file, a public CA in front of the hub) stays while it is
// in use, and an old hub CA goes only once it has left the hub's bundle and
// the hub no longer serves with it. The published CAs are always in the
// result, so it is never empty.
func UpdateTrust(trusted, published []byte, servesHub func(ca *x509.Certificate) bool) (TrustUpdate, error) {
	cur, err := ParseCertificates(trusted)
	if err != nil {
		return TrustUpdate{}, fmt.Errorf("the trusted hub CA bundle: %w", err)
	}
	pub, err := ParseCertificates(published)
	if err != nil {
		return TrustUpdate{}, fmt.Errorf("the hub's published CA bundle: %w", err)
	}
	has := func(set []*x509.Certificate, c *x509.Certificate) bool {
		return slices.ContainsFunc(set, func(o *x509.Certificate) bool { return o.Equal(c) })
	}
	var out TrustUpdate
	var next []*x509.Certificate
	for _, c := range cur {
		if has(next, c) {
			continue
		}
		if !has(pub, c) && !servesHub(c) {
			out.Dropped = append(out.Dropped, Fingerprint(c))
			continue
		}
		next = append(next, c)
	}
	for _, c := range pub {
		if !has(next, c) {
			next = append(next, c)
			out.Added = append(out.Added, Fingerprint(c))
		}
	}
	if out.Trusted, err = certutil.EncodeCertificates(next...); err != nil {
		return TrustUpdate{}, fmt.Errorf("encode the trusted hub CA bundle: %w", err)
	}
	out.Changed = len(out.Added) > 0 || len(out.Dropped) > 0
	return out, nil
}

// ServingVerifier returns a check that a CA verifies chain, the certificates
// a TLS server presented (leaf first), for host; an empty chain verifies
// nothing.
func ServingVerifier(chain []*x509.Certificate, host string) func(ca *x509.Certificate) bool {
	return func(ca *x509.Certificate) bool {
		if len(chain) == 0 {
			return false
		}
		roots, inter := x509.NewCertPool(), x509.NewCertPool()
		roots.AddCert(ca)
		for _, c := range chain[1:] {
			inter.AddCert(c)
		}
		_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host})
		return err == nil
	}
}

// BundleContains reports whether every certificate of sub is in bundle.
func BundleContains(bundle, sub []byte) (bool, error) {
	all, err := ParseCertificates(bundle)
	if err != nil {
		return false, err
	}
	want, err := ParseCertificates(sub)
	if err != nil {
		return false, err
	}
	for _, w := range want {
		if !slices.ContainsFunc(all, func(c *x509.Certificate) bool { return c.Equal(w) }) {
			return false, nil
		}
	}
	return true, nil
}

// BundlesShareCA reports whether two PEM bundles have a certificate in
// common; bundles that do not parse share nothing.
func BundlesShareCA(a, b []byte) bool {
	as, err := ParseCertificates(a)
	if err != nil {
		return false
	}
	bs, err := ParseCertificates(b)
	if err != nil {
		return false
	}
	for _, c := range as {
		if slices.ContainsFunc(bs, func(o *x509.Certificate) bool { return o.Equal(c) }) {
			return true
		}
	}
	return false
}

// HubCAsClaim is the claim an agent adds to its ManagedCluster's
// status.clusterClaims, synthesized like version.AgentVersionClaim: the CAs
// it trusts for the hub (HubCAsClaimValue). `kubectl ocm hub rotate-ca
// --check` reads it to tell whether every cluster trusts a new hub CA yet.
const HubCAsClaim = "hubcas.kubectl-ocm.io"

// hubCAIDLength is how many hex digits of a CA's fingerprint the claim
// keeps: enough to tell CAs apart, short enough for many in a claim.
const hubCAIDLength = 16

// HubCAID is the short ID of a CA in HubCAsClaim: the first 16 hex digits
// of its SHA-256 fingerprint.
func HubCAID(c *x509.Certificate) string { return Fingerprint(c)[:hubCAIDLength] }

// HubCAsClaimValue is the value of HubCAsClaim for a trusted PEM bundle:
// the sorted HubCAIDs, comma-separated; "" for a bundle that does not
// parse (the system's roots).
func HubCAsClaimValue(bundle []byte) string {
	cs, err := ParseCertificates(bundle)
	if err != nil {
		return ""
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, HubCAID(c))
	}
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), ",")
}

// ClientSignerAnnotation, on a ManagedCluster, is the PEM bundle of the CAs
// the hub signs client certificates with from now on, set by `kubectl ocm
// hub rotate-ca --signing-ca-file` once the hub's signer switched to a new
// CA. An agent whose certificate none of them signed requests a new one at
// once rather than at its rotation time, so that the old CA can leave the
// hub's client CAs without a cluster losing the hub. No API of Kubernetes
// tells which CA signs kubernetes.io/kube-apiserver-client requests, so
// the hub administrator, who switched it, says so.
const ClientSignerAnnotation = "kubectl-ocm.io/client-signer-ca"

// ClientIssuerClaim is the claim an agent with a client certificate adds to
// its ManagedCluster's status.clusterClaims: the KeyID of the CA that
// signed its certificate (its authority key identifier). `kubectl ocm hub
// rotate-ca --signing-ca-file` reads it to tell which clusters hold a
// certificate of the new CA.
const ClientIssuerClaim = "clientissuer.kubectl-ocm.io"

// KeyID is the short hex form of a key identifier, as ClientIssuerClaim
// holds it: the first 16 hex digits; "" for none.
func KeyID(id []byte) string {
	s := hex.EncodeToString(id)
	return s[:min(len(s), hubCAIDLength)]
}

// SignedByAny reports whether one of cas signed cert.
func SignedByAny(cert *x509.Certificate, cas []*x509.Certificate) bool {
	return slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return cert.CheckSignatureFrom(ca) == nil })
}
