package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/hpke"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The token registration driver hands a cluster's agent its first hub
// credential through the same CertificateSigningRequest a certificate
// identity is approved with, so that accepting a cluster (`kubectl ocm
// accept`, auto-approval) works alike for both drivers and binds the same
// thing: the key pair of the request.
//
// The agent files a request of signer AgentTokenSignerName for its usual
// agent subject. Once the request is approved, the hub controller requests a
// token of the cluster's agent ServiceAccount and seals it to the request's
// public key (SealToken): HPKE (RFC 9180) with the DHKEM of the key's curve,
// HKDF-SHA256 and AES-256-GCM, bound to the request's name and UID. It
// stores the result in the request's SealedTokenAnnotation. Anyone who may
// read requests sees only the sealed token; the agent, which holds the
// private key, opens it (OpenToken). No certificate is ever signed, so this
// works on hubs that sign no client certificates.
const (
	// AgentTokenSignerName is the signer of the token driver's requests.
	// No certificate is issued for it: the hub controller answers an
	// approved request with a sealed token.
	AgentTokenSignerName = "kubectl-ocm.io/agent-token"
	// SealedTokenAnnotation holds, on an approved request of
	// AgentTokenSignerName, the agent's first token sealed to the
	// request's key (base64).
	SealedTokenAnnotation = "kubectl-ocm.io/sealed-token"
)

// Lifetimes of the token driver's tokens.
const (
	// DefaultAgentTokenLifetime is the lifetime of the tokens issued for a
	// request that names none (spec.expirationSeconds): an hour. The agent
	// refreshes its token after kubeconfig.TokenRefreshFraction of it.
	DefaultAgentTokenLifetime = time.Hour
	// MinTokenLifetime is the TokenRequest API's shortest token lifetime;
	// a shorter one is raised to it.
	MinTokenLifetime = 10 * time.Minute
	// MaxAgentTokenLifetime bounds the lifetime a request may ask for: a
	// day. A leaked token stays usable at most that long after the
	// ServiceAccount's deletion fails to reach it (the API server's own
	// --service-account-max-token-expiration may bound it further).
	MaxAgentTokenLifetime = 24 * time.Hour
)

// AgentTokenLifetime returns the lifetime of the tokens for a request of
// AgentTokenSignerName with spec.expirationSeconds seconds (nil: none),
// between MinTokenLifetime and MaxAgentTokenLifetime.
func AgentTokenLifetime(seconds *int32) time.Duration {
	if seconds != nil && *seconds > 0 {
		return min(max(time.Duration(*seconds)*time.Second, MinTokenLifetime), MaxAgentTokenLifetime)
	}
	return DefaultAgentTokenLifetime
}

// sealInfo binds a sealed token to the request it answers, so that a sealed
// token copied onto another request of the same key does not open.
func sealInfo(name string, uid types.UID) []byte {
	return []byte(AgentTokenSignerName + "\x00" + name + "\x00" + string(uid))
}

// SealingKey checks that pub can receive a sealed token: an ECDSA key on
// P-256, P-384 or P-521 (the curves HPKE's DHKEM has).
func SealingKey(pub any) (hpke.PublicKey, error) {
	k, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("key type %T cannot receive a sealed token: use an ECDSA key (P-256, P-384 or P-521)", pub)
	}
	ek, err := k.ECDH()
	if err != nil {
		return nil, fmt.Errorf("the ECDSA key cannot receive a sealed token: %w", err)
	}
	return hpke.NewDHKEMPublicKey(ek)
}

// SealToken seals token to the public key of csr's request, for csr's name
// and UID, and returns it base64-encoded for SealedTokenAnnotation.
func SealToken(csr *certificatesv1.CertificateSigningRequest, token []byte) (string, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", errors.New("spec.request is not a PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parse spec.request: %w", err)
	}
	pk, err := SealingKey(req.PublicKey)
	if err != nil {
		return "", err
	}
	sealed, err := hpke.Seal(pk, hpke.HKDFSHA256(), hpke.AES256GCM(), sealInfo(csr.Name, csr.UID), token)
	if err != nil {
		return "", fmt.Errorf("seal the token: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sealed), nil
}

// OpenToken opens the sealed token of the request name with UID uid with
// the request's private key.
func OpenToken(sealed, name string, uid types.UID, key crypto.Signer) ([]byte, error) {
	k, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("key type %T cannot open a sealed token", key)
	}
	ek, err := k.ECDH()
	if err != nil {
		return nil, fmt.Errorf("open the sealed token: %w", err)
	}
	priv, err := hpke.NewDHKEMPrivateKey(ek)
	if err != nil {
		return nil, fmt.Errorf("open the sealed token: %w", err)
	}
	data, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("decode the sealed token: %w", err)
	}
	token, err := hpke.Open(priv, hpke.HKDFSHA256(), hpke.AES256GCM(), sealInfo(name, uid), data)
	if err != nil {
		return nil, fmt.Errorf("open the sealed token of CertificateSigningRequest %s: %w", name, err)
	}
	return token, nil
}
