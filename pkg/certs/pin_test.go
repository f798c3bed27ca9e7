package certs

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinFixture is a CA that signed a serving certificate for hub.example,
// and another CA.
type pinFixture struct {
	ca, other, leaf *x509.Certificate
}

func newPinFixture(t *testing.T) pinFixture {
	t.Helper()
	now := time.Now()
	caPEM, _, caKey := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	otherPEM, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	ca, err := ParseCertificates(caPEM)
	require.NoError(t, err)
	other, err := ParseCertificates(otherPEM)
	require.NoError(t, err)
	key, _, err := NewPrivateKey()
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "hub"}, DNSNames: []string{"hub.example"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca[0], key.Public(), caKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return pinFixture{ca: ca[0], other: other[0], leaf: leaf}
}

// TestPinIsTheSPKIHash checks Pin against the definition kubeadm's
// --discovery-token-ca-cert-hash uses: the SHA-256 of the DER
// SubjectPublicKeyInfo, computed here from the public key itself.
func TestPinIsTheSPKIHash(t *testing.T) {
	f := newPinFixture(t)
	spki, err := x509.MarshalPKIXPublicKey(f.ca.PublicKey)
	require.NoError(t, err)
	sum := sha256.Sum256(spki)
	assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), Pin(f.ca))
	assert.NotEqual(t, Pin(f.ca), Pin(f.other))
	assert.NotEqual(t, "sha256:"+Fingerprint(f.ca), Pin(f.ca), "a pin is of the key, not of the certificate")
	keyPin, err := KeyPin(f.ca.PublicKey)
	require.NoError(t, err)
	assert.Equal(t, Pin(f.ca), keyPin, "KeyPin of the CA's key")
	_, err = KeyPin(struct{}{})
	assert.Error(t, err, "KeyPin of a value that is no key")
}

func TestParsePin(t *testing.T) {
	valid := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "canonical", in: valid, want: valid},
		{name: "upper-case hex", in: strings.ToUpper(valid[:7]) + strings.ToUpper(valid[7:]), want: valid},
		{name: "upper-case type", in: "SHA256:" + valid[7:], want: valid},
		{name: "no type", in: valid[7:], wantErr: "is not a CA pin: want sha256:<64 hex digits>"},
		{name: "empty", in: "", wantErr: "is not a CA pin"},
		{name: "other hash type", in: "sha1:" + valid[7:], wantErr: `has hash type "sha1": only sha256 is supported`},
		{name: "short", in: valid[:70], wantErr: "has 63 hex digits, want 64"},
		{name: "long", in: valid + "0", wantErr: "has 65 hex digits, want 64"},
		{name: "not hex", in: "sha256:" + strings.Repeat("g", 64), wantErr: "is not hexadecimal"},
		{name: "spaces", in: " " + valid, wantErr: "hash type"},
		{name: "two colons", in: "sha256:sha256:" + valid[14:], wantErr: "is not hexadecimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePin(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParsePins(t *testing.T) {
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	got, err := ParsePins([]string{a, strings.ToUpper(b), b, a})
	require.NoError(t, err)
	assert.Equal(t, []string{a, b}, got, "canonical, in order, each once")

	got, err = ParsePins([]string{"x", a, "md5:00"})
	require.ErrorContains(t, err, `"x" is not a CA pin`)
	assert.ErrorContains(t, err, `"md5:00" has hash type "md5"`)
	assert.Equal(t, []string{a}, got)
}

func TestVerifyPinned(t *testing.T) {
	f := newPinFixture(t)
	tests := []struct {
		name        string
		candidates  []*x509.Certificate
		chain       []*x509.Certificate
		host        string
		pins        []string
		want        []*x509.Certificate
		wantErr     string
		wantOffered string
	}{
		{name: "the pinned CA signs the hub's certificate", candidates: []*x509.Certificate{f.other, f.ca}, chain: []*x509.Certificate{f.leaf},
			host: "hub.example", pins: []string{Pin(f.ca)}, want: []*x509.Certificate{f.ca}},
		{name: "one of several pins", candidates: []*x509.Certificate{f.ca}, chain: []*x509.Certificate{f.leaf},
			host: "hub.example", pins: []string{Pin(f.other), Pin(f.ca)}, want: []*x509.Certificate{f.ca}},
		{name: "the CA in the handshake", candidates: []*x509.Certificate{f.leaf, f.ca}, chain: []*x509.Certificate{f.leaf, f.ca},
			host: "hub.example", pins: []string{Pin(f.ca)}, want: []*x509.Certificate{f.ca}},
		{name: "an impostor's CA", candidates: []*x509.Certificate{f.ca}, chain: []*x509.Certificate{f.leaf},
			host: "hub.example", pins: []string{Pin(f.other)}, wantErr: "none of the CAs the server presented matches " + Pin(f.other), wantOffered: Pin(f.ca)},
		{name: "the pinned CA published, another serving", candidates: []*x509.Certificate{f.other}, chain: []*x509.Certificate{f.leaf},
			host: "hub.example", pins: []string{Pin(f.other)}, wantErr: "matches the pin but does not verify the server's certificate for hub.example", wantOffered: "no CA it presented signs it"},
		{name: "the pinned CA relayed, an impostor's serving", candidates: []*x509.Certificate{f.other, f.ca}, chain: []*x509.Certificate{f.leaf, f.ca},
			host: "hub.example", pins: []string{Pin(f.other)}, wantErr: "matches the pin but does not verify", wantOffered: "it is signed by " + Pin(f.ca)},
		{name: "another host", candidates: []*x509.Certificate{f.ca}, chain: []*x509.Certificate{f.leaf},
			host: "evil.example", pins: []string{Pin(f.ca)}, wantErr: "does not verify"},
		{name: "the leaf's own key pinned", candidates: []*x509.Certificate{f.leaf}, chain: []*x509.Certificate{f.leaf},
			host: "hub.example", pins: []string{Pin(f.leaf)}, wantErr: "does not verify"},
		{name: "no candidates", chain: []*x509.Certificate{f.leaf}, host: "hub.example", pins: []string{Pin(f.ca)}, wantErr: "it offered no CA certificate"},
		{name: "no chain", candidates: []*x509.Certificate{f.ca}, host: "hub.example", pins: []string{Pin(f.ca)}, wantErr: "does not verify"},
		{name: "no pins", candidates: []*x509.Certificate{f.ca}, chain: []*x509.Certificate{f.leaf}, host: "hub.example", wantErr: "no CA pin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VerifyPinned(tt.candidates, tt.chain, tt.host, tt.pins)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.ErrorContains(t, err, tt.wantOffered)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestServingCAs(t *testing.T) {
	f := newPinFixture(t)
	got := ServingCAs([]*x509.Certificate{f.other, f.ca, f.leaf, f.ca}, []*x509.Certificate{f.leaf}, "hub.example")
	assert.Equal(t, []*x509.Certificate{f.ca}, got, "only the CA that signs the leaf, once; never the leaf")
	assert.Equal(t, []string{Pin(f.ca), Pin(f.other)}, Pins([]*x509.Certificate{f.ca, f.other, f.ca}))
}

// FuzzParsePin: a pin ParsePin accepts is sha256: and 64 lower-case hex
// digits, equal to its input but for case, and parses to itself; every
// other input is refused with a one-line error that says what a pin is.
func FuzzParsePin(f *testing.F) {
	for _, s := range []string{
		"sha256:" + strings.Repeat("0123456789abcdef", 4),
		"SHA256:" + strings.Repeat("0123456789ABCDEF", 4),
		strings.Repeat("ab", 32), "", ":", "sha256:", "sha1:00", "sha256:zz",
		"sha256:" + strings.Repeat("a", 63) + "\n", "sha256:" + strings.Repeat("é", 32),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePin(s)
		if err != nil {
			if p != "" {
				t.Fatalf("ParsePin(%q) = %q with error %v", s, p, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "sha256") {
				t.Fatalf("ParsePin(%q) error %q: want one line naming sha256", s, msg)
			}
			return
		}
		if !strings.HasPrefix(p, PinPrefix) || len(p) != len(PinPrefix)+64 || strings.ToLower(p) != p {
			t.Fatalf("ParsePin(%q) = %q, not sha256: and 64 lower-case hex digits", s, p)
		}
		if _, err := hex.DecodeString(strings.TrimPrefix(p, PinPrefix)); err != nil {
			t.Fatalf("ParsePin(%q) = %q, not hex: %v", s, p, err)
		}
		if !strings.EqualFold(p, s) {
			t.Fatalf("ParsePin(%q) = %q, which is not the input up to case", s, p)
		}
		if again, err := ParsePin(p); err != nil || again != p {
			t.Fatalf("ParsePin(%q) = %q, %v; want itself", p, again, err)
		}
	})
}
