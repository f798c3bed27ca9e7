package certs

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A CA pin names a CA by its public key: "sha256:" and the hex SHA-256 of
// the CA certificate's DER SubjectPublicKeyInfo. It is the format of
// kubeadm's --discovery-token-ca-cert-hash, so a pin computed for kubeadm,
// or with
//
//	openssl x509 -pubkey -in ca.crt | openssl pkey -pubin -outform der | sha256sum
//
// is the same value. A pin survives the CA's reissue with the same key and
// fits on a command line, which a CA bundle does not: `kubectl ocm hub
// init` and `hub token` print the pins of the hub's serving CAs, and
// `kubectl ocm join --ca-cert-hash` trusts a CA the hub presents only when
// its pin is one of those given.

// PinPrefix starts every pin: the only hash type there is, as in kubeadm.
const PinPrefix = "sha256:"

// Pin returns the pin of c.
func Pin(c *x509.Certificate) string {
	return spkiPin(c.RawSubjectPublicKeyInfo)
}

// KeyPin returns the pin of a public key, in the format of Pin: the hub
// records the key of each cluster's agent this way, and `kubectl ocm
// accept` shows the keys of requests so. It fails for a key x509 cannot
// encode.
func KeyPin(pub any) (string, error) {
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode the public key: %w", err)
	}
	return spkiPin(spki), nil
}

// spkiPin returns the pin of a DER SubjectPublicKeyInfo.
func spkiPin(spki []byte) string {
	sum := sha256.Sum256(spki)
	return PinPrefix + hex.EncodeToString(sum[:])
}

// ParsePin checks that s is a pin and returns it in its canonical form
// (lower-case hex). Like kubeadm it takes the hash type and the hex digits
// in either case; the error names what is wrong and what a pin looks like.
func ParsePin(s string) (string, error) {
	typ, value, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("%q is not a CA pin: want sha256:<64 hex digits>, the SHA-256 of the CA's public key that `kubectl ocm hub token` prints", s)
	}
	if strings.ToLower(typ)+":" != PinPrefix {
		return "", fmt.Errorf("CA pin %q has hash type %q: only sha256 is supported (sha256:<64 hex digits>)", s, typ)
	}
	if len(value) != hex.EncodedLen(sha256.Size) {
		return "", fmt.Errorf("CA pin %q has %d hex digits, want %d (sha256:<64 hex digits>)", s, len(value), hex.EncodedLen(sha256.Size))
	}
	if _, err := hex.DecodeString(value); err != nil {
		return "", fmt.Errorf("CA pin %q is not hexadecimal after sha256: (%v)", s, err)
	}
	return PinPrefix + strings.ToLower(value), nil
}

// ParsePins parses each of pins (ParsePin) and returns them canonical and
// without duplicates, in their order; the error lists every bad one.
func ParsePins(pins []string) ([]string, error) {
	var out []string
	var errs []error
	for _, p := range pins {
		c, err := ParsePin(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

// Pins returns the pins of cs, without duplicates, in their order.
func Pins(cs []*x509.Certificate) []string {
	var out []string
	for _, c := range cs {
		if p := Pin(c); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Pinned returns the certificates of cs whose pin is one of pins (in
// canonical form, as ParsePins returns them).
func Pinned(cs []*x509.Certificate, pins []string) []*x509.Certificate {
	var out []*x509.Certificate
	for _, c := range cs {
		if slices.Contains(pins, Pin(c)) && !slices.ContainsFunc(out, c.Equal) {
			out = append(out, c)
		}
	}
	return out
}

// ServingCAs returns the CA certificates among candidates that verify
// chain, the certificates a TLS server presented (leaf first), for host:
// the CAs a client may trust to reach that server. Each appears once.
func ServingCAs(candidates, chain []*x509.Certificate, host string) []*x509.Certificate {
	verifies := ServingVerifier(chain, host)
	var out []*x509.Certificate
	for _, c := range candidates {
		if c.IsCA && !slices.ContainsFunc(out, c.Equal) && verifies(c) {
			out = append(out, c)
		}
	}
	return out
}

// VerifyPinned decides which CAs a client trusts for a server it has not
// sent anything secret to yet. candidates are the CAs it learned, over a
// connection nothing verified (a CA bundle the server published, the
// certificates of its TLS handshake); chain is what the server presented
// for host. The result is every candidate whose pin is one of pins and that
// verifies chain; the error says which pins the server offered instead, so
// that an operator can tell a stale pin from an impostor.
func VerifyPinned(candidates, chain []*x509.Certificate, host string, pins []string) ([]*x509.Certificate, error) {
	if len(pins) == 0 {
		return nil, errors.New("no CA pin to verify the server with")
	}
	pinned := Pinned(candidates, pins)
	if len(pinned) == 0 {
		offered := Pins(ServingCAs(candidates, chain, host))
		if len(offered) == 0 {
			offered = Pins(candidates)
		}
		return nil, fmt.Errorf("none of the CAs the server presented matches %s (it offered %s)", strings.Join(pins, ", "), orNone(offered))
	}
	trusted := ServingCAs(pinned, chain, host)
	if len(trusted) == 0 {
		signers := "no CA it presented signs it"
		if serving := Pins(ServingCAs(candidates, chain, host)); len(serving) > 0 {
			signers = "it is signed by " + strings.Join(serving, ", ")
		}
		return nil, fmt.Errorf("the CA %s matches the pin but does not verify the server's certificate for %s (not signed by it, expired, or not for that host): %s", strings.Join(Pins(pinned), ", "), host, signers)
	}
	return trusted, nil
}

func orNone(pins []string) string {
	if len(pins) == 0 {
		return "no CA certificate"
	}
	return strings.Join(pins, ", ")
}
