package app

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// TestTLSFlags checks --tls-min-version and --tls-cipher-suites: each is
// checked on its own, and without a namespace they are the whole profile.
func TestTLSFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    uint16
		suites  []uint16
		wantErr string
	}{
		{name: "defaults", want: tls.VersionTLS12},
		{name: "TLS 1.3", args: []string{"--tls-min-version=VersionTLS13"}, want: tls.VersionTLS13},
		{name: "OpenSSL spelling", args: []string{"--tls-min-version=TLSv1.3"}, want: tls.VersionTLS13},
		{
			name:   "suites",
			args:   []string{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
			want:   tls.VersionTLS12,
			suites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
		},
		{name: "bad version", args: []string{"--tls-min-version=1.3"}, wantErr: `--tls-min-version: "1.3" is not a TLS version: use VersionTLS10`},
		{name: "bad suite", args: []string{"--tls-cipher-suites=ECDHE-RSA-AES128-GCM-SHA256"}, wantErr: `--tls-cipher-suites: unknown cipher suite "ECDHE-RSA-AES128-GCM-SHA256"`},
		{name: "insecure suite", args: []string{"--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA"}, wantErr: `--tls-cipher-suites: insecure cipher suite "TLS_RSA_WITH_RC4_128_SHA"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &TLSOptions{}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, "the endpoints", "read at start")
			require.NoError(t, fs.Parse(tc.args))
			err := o.Validate()
			if err == nil {
				// The insecure suite passes Validate, which checks flags on
				// their own, and fails with the profile it makes.
				var d *tlsprofile.Dynamic
				var w *tlsprofile.Watcher
				if d, w, err = o.Load(context.Background(), nil, "", nil, logr.Discard()); err == nil {
					assert.Nil(t, w, "no watcher without a namespace")
					assert.Equal(t, tc.want, d.Profile().MinVersion)
					assert.Equal(t, tc.suites, d.Profile().CipherSuites)
				}
			}
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestServesECDSA checks the hub's warning for a profile that leaves its
// ECDSA certificate to TLS 1.3 clients, as OCM's own RSA-only example does.
func TestServesECDSA(t *testing.T) {
	rsaOnly := tlsprofile.Profile{CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}}
	assert.Contains(t, servesECDSA("the server")(rsaOnly), "serves TLS 1.3 clients only: add TLS_ECDHE_ECDSA_ suites")
	assert.Empty(t, servesECDSA("the server")(tlsprofile.Profile{}))
}

// TestTLSBothFlagsReadNoConfigMap checks that flags setting both keys, as
// an operator passes them, are the whole profile: the ConfigMap could
// change nothing, so the API server, which here answers nothing, is not
// asked for it and no watcher is returned.
func TestTLSBothFlagsReadNoConfigMap(t *testing.T) {
	nowhere := &rest.Config{Host: "https://127.0.0.1:1"}
	o := &TLSOptions{MinVersion: "VersionTLS13", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}
	d, w, err := o.Load(context.Background(), nowhere, "ns", nil, logr.Discard())
	require.NoError(t, err)
	assert.Nil(t, w)
	assert.Equal(t, uint16(tls.VersionTLS13), d.Profile().MinVersion)
	// One flag leaves the other key to the ConfigMap, which is read (and
	// retried while nothing answers, here until the context ends).
	o.CipherSuites = nil
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, err = o.Load(ctx, nowhere, "ns", nil, logr.Discard())
	require.ErrorContains(t, err, "read the TLS profile, ConfigMap ns/ocm-tls-profile: context deadline exceeded; the last read: ")
	require.ErrorContains(t, err, "connection refused")
}
