package tlsprofile

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestResolve checks the rule that merges the layers of a profile: a
// custom resource's field (or a flag) wins over the ConfigMap key by key,
// the ConfigMap over the default, and an error names the layer at fault.
func TestResolve(t *testing.T) {
	const path = "spec.tlsProfile of Klusterlet klusterlet"
	cm := configMap(map[string]string{MinTLSVersionKey: "VersionTLS13", CipherSuitesKey: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	tests := []struct {
		name     string
		cm       *corev1.ConfigMap
		spec     Settings
		wantArgs []string
		want     Profile
		wantErr  string
	}{
		{name: "nothing: the default, no flags", want: Profile{MinVersion: tls.VersionTLS12}},
		{
			name: "the ConfigMap alone", cm: cm,
			wantArgs: []string{"--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			want:     Profile{MinVersion: tls.VersionTLS13, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
		},
		{
			name: "the field wins over its key, the other key stays", cm: cm, spec: FromSpec(path, "VersionTLS12", nil),
			wantArgs: []string{"--tls-min-version=VersionTLS12", "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			want:     Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
		},
		{
			name: "fields alone, suites cleaned", spec: FromSpec(path, "", []string{" TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 "}),
			wantArgs: []string{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			want:     Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
		},
		{
			name: "an unknown suite in a field", spec: FromSpec(path, "", []string{"TLS_NO_SUCH_SUITE"}),
			wantErr: `spec.tlsProfile.cipherSuites of Klusterlet klusterlet: unknown cipher suite "TLS_NO_SUCH_SUITE"`,
		},
		{
			name: "a bad ConfigMap key", cm: configMap(map[string]string{MinTLSVersionKey: "TLS13"}),
			wantErr: `key minTLSVersion of ConfigMap ns/ocm-tls-profile: "TLS13" is not a TLS version`,
		},
		{
			name: "a bad ConfigMap key the field overrides", cm: configMap(map[string]string{MinTLSVersionKey: "TLS13"}), spec: FromSpec(path, "VersionTLS13", nil),
			wantArgs: []string{"--tls-min-version=VersionTLS13"},
			want:     Profile{MinVersion: tls.VersionTLS13},
		},
		{
			name: "an insecure suite with the ConfigMap's TLS 1.2", cm: configMap(map[string]string{MinTLSVersionKey: "VersionTLS12"}),
			spec:    FromSpec(path, "", []string{"TLS_RSA_WITH_RC4_128_SHA"}),
			wantErr: "key minTLSVersion of ConfigMap ns/ocm-tls-profile with spec.tlsProfile.cipherSuites of Klusterlet klusterlet: insecure cipher suite",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p, err := Resolve(tt.cm, tt.spec)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantArgs, s.Args())
			assert.True(t, tt.want.Equal(p), "got %s, want %s", p, tt.want)
		})
	}
}

// TestHash checks that the hash follows the flags: equal for the same
// flags however they were spelled, different for another profile.
func TestHash(t *testing.T) {
	a := FromSpec("spec", "VersionTLS13", []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	b := FromFlags("VersionTLS13", []string{" TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	c := FromSpec("spec", "VersionTLS12", []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	assert.Equal(t, a.Hash(), b.Hash())
	assert.NotEqual(t, a.Hash(), c.Hash())
	assert.Len(t, a.Hash(), 16)
}

// TestFromSpecSources checks that the fields are named in errors as the
// user wrote them.
func TestFromSpecSources(t *testing.T) {
	s := FromSpec("spec.tlsProfile of ClusterManager cluster-manager", "VersionTLS13", []string{"A"})
	assert.Equal(t, "spec.tlsProfile.minTLSVersion of ClusterManager cluster-manager", s.MinVersion.Source)
	assert.Equal(t, "spec.tlsProfile.cipherSuites of ClusterManager cluster-manager", s.CipherSuites.Source)
	assert.False(t, FromSpec("spec.tlsProfile", " ", []string{""}).MinVersion.IsSet())
	assert.Equal(t, "spec.tlsProfile.minTLSVersion", FromSpec("spec.tlsProfile", "VersionTLS13", nil).MinVersion.Source)
}
