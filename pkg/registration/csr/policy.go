package csr

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Key sizes below which a request is refused.
const (
	// MinRSABits is the smallest RSA modulus accepted.
	MinRSABits = 2048
	// MinECDSABits is the smallest ECDSA curve accepted (P-256).
	MinECDSABits = 256
)

// Request is what the policy looks at in one CertificateSigningRequest.
type Request struct {
	// Name is the request's name, for messages.
	Name string
	// RequestUID is the request's metadata.uid, which no other object
	// ever has.
	RequestUID string
	// Cluster is the value of the open-cluster-management.io/cluster-name label.
	Cluster string
	// Addon is the value of the open-cluster-management.io/addon-name label,
	// which only add-on requests carry.
	Addon string
	// Requester is spec.username, set by the API server from the creator's
	// credentials.
	Requester string
	// Groups are spec.groups, the requester's groups.
	Groups []string
	// UID is spec.uid, the requester's UID: a ServiceAccount's UID when a
	// token of it made the request.
	UID string
	// SignerName is spec.signerName.
	SignerName string
	// Usages are spec.usages.
	Usages []certificatesv1.KeyUsage
	// CommonName, Organizations and OrganizationalUnits are the requested
	// certificate subject.
	CommonName          string
	Organizations       []string
	OrganizationalUnits []string
	// AltNames are the subject alternative names asked for (DNS names, IP
	// addresses, e-mail addresses and URIs, as text).
	AltNames []string
	// PublicKey is the key the certificate would be issued for.
	PublicKey any
	// SignatureError is why the request's self-signature does not verify,
	// nil when it does.
	SignatureError error
}

// Key returns the pin of the request's key (certs.KeyPin), "" when it holds
// none x509 can encode. For the token driver it is the key the token is
// sealed to.
func (r Request) Key() string {
	pin, err := certs.KeyPin(r.PublicKey)
	if err != nil {
		return ""
	}
	return pin
}

// ParseRequest extracts the policy's view of csr. It fails only when
// spec.request is not a PEM certificate request at all.
func ParseRequest(csr *certificatesv1.CertificateSigningRequest) (Request, error) {
	req := Request{
		Name:       csr.Name,
		RequestUID: string(csr.UID),
		Cluster:    csr.Labels[clusterv1.ClusterNameLabelKey],
		Addon:      csr.Labels[addonv1alpha1.AddonLabelKey],
		Requester:  csr.Spec.Username,
		Groups:     csr.Spec.Groups,
		UID:        csr.Spec.UID,
		SignerName: csr.Spec.SignerName,
		Usages:     csr.Spec.Usages,
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return req, errors.New("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	x, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return req, fmt.Errorf("parse spec.request: %w", err)
	}
	req.CommonName = x.Subject.CommonName
	req.Organizations = x.Subject.Organization
	req.OrganizationalUnits = x.Subject.OrganizationalUnit
	req.PublicKey = x.PublicKey
	req.SignatureError = x.CheckSignature()
	req.AltNames = append(req.AltNames, x.DNSNames...)
	req.AltNames = append(req.AltNames, x.EmailAddresses...)
	for _, ip := range x.IPAddresses {
		req.AltNames = append(req.AltNames, ip.String())
	}
	for _, u := range x.URIs {
		req.AltNames = append(req.AltNames, u.String())
	}
	return req, nil
}

// AgentUsages returns the key usages of an agent's or add-on agent's client
// certificate: what the agents request and all that the approval policy
// allows (of which client auth is required), as OCM's agents ask for them.
func AgentUsages() []certificatesv1.KeyUsage {
	return []certificatesv1.KeyUsage{
		certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
	}
}

// requiredUsage is the usage an agent certificate must request.
const requiredUsage = certificatesv1.UsageClientAuth

// Validate checks that req is an agent certificate request for the cluster
// its label names. The error says what is wrong; nil means the request may be
// approved as far as its content goes (who asked is CheckRequester's part).
func Validate(req Request) error {
	if req.Cluster == "" {
		return fmt.Errorf("no %s label", clusterv1.ClusterNameLabelKey)
	}
	if err := validSignerAndUsages(req); err != nil {
		return err
	}
	if cluster, _, ok := identity.ParseAgentUserName(req.CommonName); !ok || cluster != req.Cluster {
		return fmt.Errorf("common name %q is not %s<agent-id> for the labeled cluster %s", req.CommonName, identity.AgentUserName(req.Cluster, ""), req.Cluster)
	}
	if err := validOrganizations(req.Cluster, req.Organizations); err != nil {
		return err
	}
	return validKeyAndSignature(req)
}

// validSignerAndUsages checks that req asks the kube-apiserver-client signer
// for a client certificate, or the token driver's signer
// (certs.AgentTokenSignerName) for a token with the usages of one: client
// auth, optionally with digital signature and key encipherment, and nothing
// else.
func validSignerAndUsages(req Request) error {
	if req.SignerName != certificatesv1.KubeAPIServerClientSignerName && req.SignerName != certs.AgentTokenSignerName {
		return fmt.Errorf("signer %s is neither %s nor %s", req.SignerName, certificatesv1.KubeAPIServerClientSignerName, certs.AgentTokenSignerName)
	}
	return validUsages(req)
}

// validUsages checks that req asks for a client certificate: client auth,
// optionally with digital signature and key encipherment, and nothing else.
func validUsages(req Request) error {
	allowed := AgentUsages()
	for _, u := range req.Usages {
		if !slices.Contains(allowed, u) {
			return fmt.Errorf("usage %q is not allowed for an agent certificate (allowed: %v)", u, allowed)
		}
	}
	if !slices.Contains(req.Usages, requiredUsage) {
		return fmt.Errorf("usages %v lack %q", req.Usages, requiredUsage)
	}
	return nil
}

// validKeyAndSignature checks that req names no subject alternative names,
// holds a key of an allowed type and size, and verifies with it.
func validKeyAndSignature(req Request) error {
	if len(req.AltNames) > 0 {
		return fmt.Errorf("subject alternative names %v are not allowed in an agent certificate", req.AltNames)
	}
	if err := validKey(req.PublicKey); err != nil {
		return err
	}
	if req.SignerName == certs.AgentTokenSignerName {
		// The token is sealed to this key.
		if _, err := certs.SealingKey(req.PublicKey); err != nil {
			return err
		}
	}
	if req.SignatureError != nil {
		return fmt.Errorf("the request's signature does not verify: %w", req.SignatureError)
	}
	return nil
}

// validOrganizations checks that orgs are exactly the cluster's group and
// the managed-clusters group, each once, as OCM's agents ask. Either group
// alone is refused: a certificate with fewer groups than every agent holds
// would be one that rules keyed on the missing group do not see.
func validOrganizations(cluster string, orgs []string) error {
	got := slices.Clone(orgs)
	slices.Sort(got)
	want := identity.AgentGroups(cluster)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("organizations %v are not %v, the groups of every agent of cluster %s", orgs, identity.AgentGroups(cluster), cluster)
	}
	return nil
}

// validKey checks the type and size of the requested certificate's key.
func validKey(key any) error {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		if bits := k.Params().BitSize; bits < MinECDSABits {
			return fmt.Errorf("ECDSA key on a %d-bit curve is too small: use P-256 or larger", bits)
		}
	case *rsa.PublicKey:
		if bits := k.N.BitLen(); bits < MinRSABits {
			return fmt.Errorf("RSA key of %d bits is too small: use %d bits or more", bits, MinRSABits)
		}
	case ed25519.PublicKey:
	case nil:
		return errors.New("the request holds no public key")
	default:
		return fmt.Errorf("key type %T is not allowed: use ECDSA, RSA or Ed25519", key)
	}
	return nil
}

// CheckRequester refuses a request whose requester is bound to a cluster
// other than the one the request is for: another cluster's agent, or a
// cluster-bound bootstrap identity of another cluster. No approver, not even
// one told to trust any requester, approves such a request.
func CheckRequester(req Request) error {
	who := identity.Classify(req.Requester)
	switch who.Kind {
	case identity.Agent, identity.ClusterBootstrap:
		if who.Cluster != req.Cluster {
			return fmt.Errorf("requester %s is the %s of cluster %s, not of %s", req.Requester, who.Kind, who.Cluster, req.Cluster)
		}
	}
	return nil
}

// Decided reports whether csr was approved, denied or failed already
// (certs.StateOf).
func Decided(csr *certificatesv1.CertificateSigningRequest) bool {
	return certs.StateOf(csr).Decided()
}
