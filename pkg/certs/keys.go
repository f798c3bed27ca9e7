package certs

import (
	"crypto"
	"fmt"

	"k8s.io/client-go/util/keyutil"
)

// NewPrivateKey generates an ECDSA P-256 private key and returns it with its
// PEM encoding ("EC PRIVATE KEY").
func NewPrivateKey() (crypto.Signer, []byte, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("generate private key: %w", err)
	}
	key, err := ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, nil, err
	}
	return key, keyPEM, nil
}

// ParsePrivateKey decodes the first PEM private key in data that can sign:
// EC, PKCS#1 RSA or PKCS#8.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	key, err := keyutil.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", key)
	}
	return signer, nil
}

// publicKeyEqual reports whether two public keys are the same key.
func publicKeyEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	ea, ok := a.(equaler)
	return ok && ea.Equal(b)
}
