package tlsprofile

import (
	"crypto/tls"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    uint16
		wantErr string
	}{
		{name: "empty is the default", in: "", want: tls.VersionTLS12},
		{name: "blank is the default", in: "  ", want: tls.VersionTLS12},
		{name: "VersionTLS10", in: "VersionTLS10", want: tls.VersionTLS10},
		{name: "VersionTLS11", in: "VersionTLS11", want: tls.VersionTLS11},
		{name: "VersionTLS12", in: "VersionTLS12", want: tls.VersionTLS12},
		{name: "VersionTLS13", in: "VersionTLS13", want: tls.VersionTLS13},
		{name: "TLSv1.0", in: "TLSv1.0", want: tls.VersionTLS10},
		{name: "TLSv1.1", in: "TLSv1.1", want: tls.VersionTLS11},
		{name: "TLSv1.2", in: "TLSv1.2", want: tls.VersionTLS12},
		{name: "TLSv1.3 with spaces", in: " TLSv1.3 ", want: tls.VersionTLS13},
		{name: "number only", in: "1.3", wantErr: `"1.3" is not a TLS version: use VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13 (also TLSv1.0 to TLSv1.3)`},
		{name: "other spelling", in: "TLS1.3", wantErr: `"TLS1.3" is not a TLS version`},
		{name: "wrong case", in: "versiontls12", wantErr: `"versiontls12" is not a TLS version`},
		{name: "unknown version", in: "VersionTLS14", wantErr: `"VersionTLS14" is not a TLS version`},
		{name: "SSL", in: "VersionSSL30", wantErr: `"VersionSSL30" is not a TLS version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVersion(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestVersionName(t *testing.T) {
	assert.Equal(t, "VersionTLS13", VersionName(tls.VersionTLS13))
	assert.Equal(t, "0x0300", VersionName(0x0300))
}

func TestParseCipherSuites(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []uint16
		wantErr string
	}{
		{name: "empty", in: "", want: nil},
		{name: "one", in: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", want: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
		{
			name: "order, spaces and a trailing comma",
			in:   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,",
			want: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
		},
		{name: "TLS 1.3 name", in: "TLS_AES_128_GCM_SHA256", want: []uint16{tls.TLS_AES_128_GCM_SHA256}},
		{name: "insecure name parses", in: "TLS_RSA_WITH_3DES_EDE_CBC_SHA", want: []uint16{tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA}},
		{
			name:    "OpenSSL name",
			in:      "ECDHE-RSA-AES128-GCM-SHA256",
			wantErr: `unknown cipher suite "ECDHE-RSA-AES128-GCM-SHA256": use IANA names that Go's crypto/tls supports: TLS_`,
		},
		{
			name:    "every unknown name is named",
			in:      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_FOO,TLS_BAR",
			wantErr: `unknown cipher suites "TLS_FOO", "TLS_BAR"`,
		},
		{name: "wrong case", in: "tls_ecdhe_rsa_with_aes_128_gcm_sha256", wantErr: `unknown cipher suite "tls_ecdhe_rsa_with_aes_128_gcm_sha256"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCipherSuites(SplitCipherSuites(tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// configMap builds an ocm-tls-profile ConfigMap in namespace ns with data.
func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: ConfigMapName}, Data: data}
}

func TestSettingsProfile(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		flagMin string
		flagCS  []string
		want    Profile
		wantErr string
	}{
		{name: "nothing: the default", want: Profile{MinVersion: tls.VersionTLS12}},
		{name: "ConfigMap version", data: map[string]string{MinTLSVersionKey: "VersionTLS13"}, want: Profile{MinVersion: tls.VersionTLS13}},
		{
			name: "ConfigMap version and suites",
			data: map[string]string{MinTLSVersionKey: "TLSv1.2", CipherSuitesKey: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
			want: Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
		},
		{name: "other keys are left alone", data: map[string]string{"comment": "x", MinTLSVersionKey: "VersionTLS13"}, want: Profile{MinVersion: tls.VersionTLS13}},
		{
			name:    "the flag wins over the ConfigMap version",
			data:    map[string]string{MinTLSVersionKey: "VersionTLS10", CipherSuitesKey: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
			flagMin: "VersionTLS13",
			want:    Profile{MinVersion: tls.VersionTLS13, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
		},
		{
			name:   "the flag wins over the ConfigMap suites",
			data:   map[string]string{CipherSuitesKey: "TLS_FOO"},
			flagCS: []string{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
			want:   Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}},
		},
		{
			name: "insecure suite with a legacy minimum",
			data: map[string]string{MinTLSVersionKey: "VersionTLS10", CipherSuitesKey: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_3DES_EDE_CBC_SHA"},
			want: Profile{MinVersion: tls.VersionTLS10, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA}},
		},
		{
			name: "TLS 1.3 suites with TLS 1.3",
			data: map[string]string{MinTLSVersionKey: "VersionTLS13", CipherSuitesKey: "TLS_AES_128_GCM_SHA256"},
			want: Profile{MinVersion: tls.VersionTLS13, CipherSuites: []uint16{tls.TLS_AES_128_GCM_SHA256}},
		},
		{
			name:    "bad ConfigMap version",
			data:    map[string]string{MinTLSVersionKey: "TLS1.3"},
			wantErr: `key minTLSVersion of ConfigMap ns/ocm-tls-profile: "TLS1.3" is not a TLS version: use VersionTLS10`,
		},
		{
			name:    "bad flag version",
			flagMin: "1.2",
			wantErr: `--tls-min-version: "1.2" is not a TLS version`,
		},
		{
			name:    "bad ConfigMap suite",
			data:    map[string]string{CipherSuitesKey: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,AES128-SHA"},
			wantErr: `key cipherSuites of ConfigMap ns/ocm-tls-profile: unknown cipher suite "AES128-SHA": use IANA names`,
		},
		{
			name:    "bad flag suite",
			flagCS:  []string{"TLS_NULL"},
			wantErr: `--tls-cipher-suites: unknown cipher suite "TLS_NULL"`,
		},
		{
			name:    "insecure suite with the default minimum",
			data:    map[string]string{CipherSuitesKey: "TLS_RSA_WITH_RC4_128_SHA"},
			wantErr: `key cipherSuites of ConfigMap ns/ocm-tls-profile: insecure cipher suite "TLS_RSA_WITH_RC4_128_SHA" (crypto/tls.InsecureCipherSuites) refused with a minimum of VersionTLS12: remove it, or set the minimum version to VersionTLS10 or VersionTLS11`,
		},
		{
			name:    "insecure flag suite with a ConfigMap minimum",
			data:    map[string]string{MinTLSVersionKey: "VersionTLS13"},
			flagCS:  []string{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"},
			wantErr: `key minTLSVersion of ConfigMap ns/ocm-tls-profile with --tls-cipher-suites: insecure cipher suite "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"`,
		},
		{
			name:    "TLS 1.3 suites only below TLS 1.3",
			data:    map[string]string{CipherSuitesKey: "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"},
			wantErr: `only TLS 1.3 cipher suites "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", which Go does not configure, so connections below TLS 1.3 would have no cipher suite with a minimum of VersionTLS12: add TLS 1.2 suites or set the minimum version to VersionTLS13`,
		},
		{
			name:    "misspelled key",
			data:    map[string]string{"minTlsVersion": "VersionTLS13"},
			wantErr: `ConfigMap ns/ocm-tls-profile: key "minTlsVersion" is not read: spell it minTLSVersion`,
		},
		{
			name:    "misspelled suites key",
			data:    map[string]string{"ciphersuites": "TLS_AES_128_GCM_SHA256"},
			wantErr: `key "ciphersuites" is not read: spell it cipherSuites`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var settings Settings
			var err error
			if tt.data != nil {
				settings, err = FromConfigMap(configMap(tt.data))
			}
			var got Profile
			if err == nil {
				got, err = settings.Override(FromFlags(tt.flagMin, tt.flagCS)).Profile()
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		profile Profile
		before  *tls.Config
		want    *tls.Config
	}{
		{name: "zero profile", want: &tls.Config{MinVersion: tls.VersionTLS12}},
		{
			name:    "suites replace the configuration's",
			profile: Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
			before:  &tls.Config{MinVersion: tls.VersionTLS10, CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_CBC_SHA}},
			want:    &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
		},
		{
			name:    "no suites restore Go's defaults",
			profile: Profile{MinVersion: tls.VersionTLS13},
			before:  &tls.Config{CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_CBC_SHA}},
			want:    &tls.Config{MinVersion: tls.VersionTLS13},
		},
		{
			name:    "TLS 1.3 suites are left out",
			profile: Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}},
			want:    &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}},
		},
		{
			name:    "a lower maximum is raised",
			profile: Profile{MinVersion: tls.VersionTLS13},
			before:  &tls.Config{MaxVersion: tls.VersionTLS12},
			want:    &tls.Config{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &tls.Config{}
			if tt.before != nil {
				c = tt.before.Clone()
			}
			tt.profile.Option()(c)
			assert.Equal(t, tt.want.MinVersion, c.MinVersion)
			assert.Equal(t, tt.want.MaxVersion, c.MaxVersion)
			assert.Equal(t, tt.want.CipherSuites, c.CipherSuites)
		})
	}
}

func TestProfileString(t *testing.T) {
	assert.Equal(t, "VersionTLS12 with Go's default cipher suites", Profile{}.String())
	assert.Equal(t, "VersionTLS12 with TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		Profile{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}.String())
	assert.True(t, Profile{}.Equal(Profile{MinVersion: tls.VersionTLS12}))
}

func TestAllowsECDSA(t *testing.T) {
	tests := []struct {
		name    string
		profile Profile
		want    bool
	}{
		{name: "Go's suites", profile: Profile{}, want: true},
		{name: "TLS 1.3", profile: Profile{MinVersion: tls.VersionTLS13, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}, want: true},
		{name: "an ECDSA suite", profile: Profile{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, want: true},
		{name: "RSA suites only", profile: Profile{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_128_GCM_SHA256}}, want: false},
		{name: "RSA and TLS 1.3 suites", profile: Profile{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_AES_128_GCM_SHA256}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.profile.AllowsECDSA())
		})
	}
}
