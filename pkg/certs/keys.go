package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// PEM block types of private keys.
const (
	ecPrivateKeyBlock    = "EC PRIVATE KEY"
	rsaPrivateKeyBlock   = "RSA PRIVATE KEY"
	pkcs8PrivateKeyBlock = "PRIVATE KEY"
)

// NewPrivateKey generates an ECDSA P-256 private key and returns it with its
// PEM encoding ("EC PRIVATE KEY").
func NewPrivateKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate private key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode private key: %w", err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: ecPrivateKeyBlock, Bytes: der}), nil
}

// ParsePrivateKey decodes the first PEM private key in data: EC, PKCS#1 RSA or
// PKCS#8.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		var (
			key any
			err error
		)
		switch block.Type {
		case ecPrivateKeyBlock:
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case rsaPrivateKeyBlock:
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case pkcs8PrivateKeyBlock:
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", block.Type, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s of type %T cannot sign", block.Type, key)
		}
		return signer, nil
	}
	return nil, errors.New("no PEM private key found")
}

// publicKeyEqual reports whether two public keys are the same key.
func publicKeyEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	ea, ok := a.(equaler)
	return ok && ea.Equal(b)
}
