package tlsprofile

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
)

// selfSigned returns a throwaway ECDSA serving certificate.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// handshake runs one handshake over a pipe between a server configured by
// opts and a client limited to maxVersion; it returns the client's error.
func handshake(t *testing.T, cert tls.Certificate, maxVersion uint16, opts ...func(*tls.Config)) error {
	t.Helper()
	server := &tls.Config{Certificates: []tls.Certificate{cert}}
	for _, o := range opts {
		o(server)
	}
	sc, cc := net.Pipe()
	defer func() { _ = sc.Close() }()
	defer func() { _ = cc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		_ = tls.Server(sc, server).HandshakeContext(ctx)
		_ = sc.Close()
	}()
	client := tls.Client(cc, &tls.Config{InsecureSkipVerify: true, MaxVersion: maxVersion}) //nolint:gosec // a throwaway certificate
	return client.HandshakeContext(ctx)
}

func TestDynamicServerOption(t *testing.T) {
	cert := selfSigned(t)
	d := NewDynamic(Profile{MinVersion: tls.VersionTLS13})
	// An option after the profile's still applies to each handshake.
	later := func(c *tls.Config) { c.NextProtos = []string{"h2"} }

	require.Error(t, handshake(t, cert, tls.VersionTLS12, d.ServerOption(), later), "TLS 1.2 client with a TLS 1.3 profile")
	require.NoError(t, handshake(t, cert, tls.VersionTLS13, d.ServerOption(), later), "TLS 1.3 client with a TLS 1.3 profile")

	d.Set(Profile{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}})
	require.NoError(t, handshake(t, cert, tls.VersionTLS12, d.ServerOption(), later), "TLS 1.2 client after the profile changed")
}

func TestDynamicServerOptionKeepsPreviousGetConfigForClient(t *testing.T) {
	cert := selfSigned(t)
	d := NewDynamic(Profile{MinVersion: tls.VersionTLS13})
	errRefused := errors.New("refused")
	before := func(c *tls.Config) {
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return nil, errRefused }
	}
	require.Error(t, handshake(t, cert, tls.VersionTLS13, before, d.ServerOption()))
	// A GetConfigForClient that returns a configuration gets the profile.
	before = func(c *tls.Config) {
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10}, nil
		}
	}
	require.Error(t, handshake(t, cert, tls.VersionTLS12, before, d.ServerOption()))
	require.NoError(t, handshake(t, cert, tls.VersionTLS13, before, d.ServerOption()))
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name      string
		objects   []*corev1.ConfigMap
		overrides Settings
		forbidden bool
		// unanswered is how many reads the API server does not answer
		// before it does; -1 for none.
		unanswered int
		want       Profile
		wantErr    string
		wantReads  int
	}{
		{
			name:      "no right to read it",
			forbidden: true,
			wantErr:   `read the TLS profile, ConfigMap ns/ocm-tls-profile: configmaps "ocm-tls-profile" is forbidden: no rule: the component's Role must allow get, list and watch on it`,
			wantReads: 1,
		},
		{
			name:       "an API server restarting, then answering",
			unanswered: 2,
			objects:    []*corev1.ConfigMap{configMap(map[string]string{MinTLSVersionKey: "TLSv1.3"})},
			want:       Profile{MinVersion: tls.VersionTLS13},
			wantReads:  3,
		},
		{
			name:       "an API server that answers after ten refusals, past the backoff's cap",
			unanswered: 10,
			want:       Profile{MinVersion: tls.VersionTLS12},
			wantReads:  11,
		},
		{
			name:       "an API server that never answers",
			unanswered: -1,
			wantErr:    `read the TLS profile, ConfigMap ns/ocm-tls-profile: no answer for 1s: starting`,
		},
		{name: "no ConfigMap", want: Profile{MinVersion: tls.VersionTLS12}},
		{name: "no ConfigMap, a flag", overrides: FromFlags("VersionTLS13", nil), want: Profile{MinVersion: tls.VersionTLS13}},
		{
			name:    "a ConfigMap",
			objects: []*corev1.ConfigMap{configMap(map[string]string{MinTLSVersionKey: "TLSv1.3"})},
			want:    Profile{MinVersion: tls.VersionTLS13},
		},
		{
			name:    "a bad ConfigMap",
			objects: []*corev1.ConfigMap{configMap(map[string]string{MinTLSVersionKey: "TLSv13"})},
			wantErr: `key minTLSVersion of ConfigMap ns/ocm-tls-profile: "TLSv13" is not a TLS version`,
		},
		{
			name:      "a bad ConfigMap key the flag overrides",
			objects:   []*corev1.ConfigMap{configMap(map[string]string{MinTLSVersionKey: "TLSv13"})},
			overrides: FromFlags("VersionTLS12", nil),
			want:      Profile{MinVersion: tls.VersionTLS12},
		},
		{
			name:    "another namespace's ConfigMap is not read",
			objects: []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: ConfigMapName}, Data: map[string]string{MinTLSVersionKey: "VersionTLS13"}}},
			want:    Profile{MinVersion: tls.VersionTLS12},
		},
	}
	// Retries at the cap after the third: the retries go on there.
	defer func(b wait.Backoff) { loadBackoff = b }(loadBackoff)
	loadBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 4 * time.Millisecond}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset()
			reads := 0
			c.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				reads++
				switch {
				case tt.forbidden:
					return true, nil, apierrors.NewForbidden(corev1.Resource("configmaps"), ConfigMapName, errors.New("no rule"))
				case tt.unanswered < 0 || reads <= tt.unanswered:
					return true, nil, apierrors.NewServiceUnavailable("starting")
				}
				return false, nil, nil
			})
			if tt.unanswered < 0 {
				defer func(d time.Duration) { loadRetry = d }(loadRetry)
				loadRetry = time.Second
			}
			for _, cm := range tt.objects {
				_, err := c.CoreV1().ConfigMaps(cm.Namespace).Create(context.Background(), cm, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			got, err := Load(context.Background(), c, "ns", tt.overrides)
			if tt.wantReads > 0 {
				assert.Equal(t, tt.wantReads, reads, "reads of the ConfigMap")
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "got %s, want %s", got, tt.want)
		})
	}
}

func TestWatcherUpdate(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	recorder := events.NewFakeRecorder(10)
	w := &Watcher{Namespace: "ns", Profile: NewDynamic(Profile{}), Log: log, Recorder: recorder}
	steps := []struct {
		name    string
		cm      *corev1.ConfigMap
		want    Profile
		wantLog string
	}{
		{name: "TLS 1.3", cm: configMap(map[string]string{MinTLSVersionKey: "VersionTLS13"}), want: Profile{MinVersion: tls.VersionTLS13}, wantLog: "TLS profile changed"},
		{name: "bad version keeps TLS 1.3", cm: configMap(map[string]string{MinTLSVersionKey: "TLS13"}), want: Profile{MinVersion: tls.VersionTLS13}, wantLog: `\"TLS13\" is not a TLS version`},
		{name: "misspelled key keeps TLS 1.3", cm: configMap(map[string]string{"MinTLSVersion": "VersionTLS10"}), want: Profile{MinVersion: tls.VersionTLS13}, wantLog: `key \"MinTLSVersion\" is not read`},
		{name: "insecure suite keeps TLS 1.3", cm: configMap(map[string]string{CipherSuitesKey: "TLS_RSA_WITH_RC4_128_SHA"}), want: Profile{MinVersion: tls.VersionTLS13}, wantLog: "insecure cipher suite"},
		{name: "deleted: the default", cm: nil, want: Profile{MinVersion: tls.VersionTLS12}, wantLog: "TLS profile changed"},
	}
	for _, s := range steps {
		logged = nil
		w.Update(s.cm)
		assert.True(t, s.want.Equal(w.Profile.Profile()), "%s: got %s, want %s", s.name, w.Profile.Profile(), s.want)
		require.Len(t, logged, 1, s.name)
		assert.Contains(t, logged[0], s.wantLog, s.name)
		if strings.Contains(logged[0], "Invalid TLS profile") {
			require.Len(t, recorder.Events, 1, s.name)
			event := <-recorder.Events
			assert.Contains(t, event, "Warning InvalidTLSProfile", s.name)
			assert.Contains(t, event, "the profile in force stays: VersionTLS13", s.name)
		} else {
			assert.Empty(t, recorder.Events, s.name)
		}
	}
	// The same profile again logs nothing.
	logged = nil
	w.Update(nil)
	assert.Empty(t, logged)
}

func TestWatcherFlagsWin(t *testing.T) {
	w := &Watcher{Namespace: "ns", Profile: NewDynamic(Profile{MinVersion: tls.VersionTLS13}), Overrides: FromFlags("VersionTLS13", nil)}
	w.Update(configMap(map[string]string{MinTLSVersionKey: "VersionTLS10"}))
	assert.Equal(t, uint16(tls.VersionTLS13), w.Profile.Profile().MinVersion)
}

func TestWatcherStart(t *testing.T) {
	c := fake.NewClientset()
	w := &Watcher{Client: c, Namespace: "ns", Profile: NewDynamic(Profile{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	_, err := c.CoreV1().ConfigMaps("ns").Create(ctx, configMap(map[string]string{MinTLSVersionKey: "VersionTLS13"}), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return w.Profile.Profile().MinVersion == tls.VersionTLS13 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, c.CoreV1().ConfigMaps("ns").Delete(ctx, ConfigMapName, metav1.DeleteOptions{}))
	assert.Eventually(t, func() bool { return w.Profile.Profile().MinVersion == tls.VersionTLS12 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.False(t, w.NeedLeaderElection())
}

func TestApplyToClient(t *testing.T) {
	cert := selfSigned(t)
	serverMax12 := func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }
	sc, cc := net.Pipe()
	defer func() { _ = sc.Close() }()
	defer func() { _ = cc.Close() }()
	server := &tls.Config{Certificates: []tls.Certificate{cert}}
	serverMax12(server)
	go func() {
		_ = tls.Server(sc, server).Handshake()
		_ = sc.Close()
	}()
	client := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a throwaway certificate
	Profile{MinVersion: tls.VersionTLS13}.Apply(client)
	err := tls.Client(cc, client).Handshake()
	require.Error(t, err, "a TLS 1.3 client profile against a TLS 1.2 server")
	assert.ErrorContains(t, err, "protocol version")
}

func TestWatcherCheck(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	w := &Watcher{Namespace: "ns", Profile: NewDynamic(Profile{}), Log: log, Check: func(p Profile) string {
		if !p.AllowsECDSA() {
			return "TLS 1.3 clients only"
		}
		return ""
	}}
	w.Update(configMap(map[string]string{CipherSuitesKey: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}))
	require.Len(t, logged, 2)
	assert.Contains(t, logged[1], "Warning: TLS 1.3 clients only")
	logged = nil
	w.Update(configMap(map[string]string{CipherSuitesKey: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}))
	require.Len(t, logged, 1, "no warning for a profile that fits")
}
