package conversion

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestTLSProfile runs the webhook's server, which the hub tunnel shares,
// with the TLS profile of ConfigMap ocm-tls-profile read as the hub
// controller reads it, as the shipped ocm-hub-controller ServiceAccount: a
// bad profile stops the start with the reason; with VersionTLS13 a TLS 1.2
// client is refused and a TLS 1.3 client served, and the API server still
// converts; a bad change is logged, recorded as a Warning event on the
// ConfigMap and leaves TLS 1.3 in force; a good one reaches new
// connections without a restart.
func TestTLSProfile(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	s.install(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.HubNamespace, Name: tlsprofile.ConfigMapName},
		Data:       map[string]string{tlsprofile.MinTLSVersionKey: "TLSv13"},
	}
	if err := s.admin.Create(s.ctx, cm); err != nil {
		t.Fatal(err)
	}
	saCfg, err := s.hub.ConfigForServiceAccount(s.ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	logs := &clitest.SyncBuffer{}
	log := funcr.New(func(prefix, args string) { _, _ = logs.Write([]byte(args + "\n")) }, funcr.Options{})
	tlsOpts := &app.TLSOptions{}

	_, _, err = tlsOpts.Load(s.ctx, saCfg, config.HubNamespace, nil, log)
	want := `TLS profile: key minTLSVersion of ConfigMap ` + config.HubNamespace + `/ocm-tls-profile: "TLSv13" is not a TLS version: use VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13 (also TLSv1.0 to TLSv1.3)`
	if err == nil || err.Error() != want {
		t.Fatalf("start with a bad profile: got error %v, want %s", err, want)
	}

	s.setMinVersion(t, cm, "VersionTLS13")
	profile, watcher, err := tlsOpts.Load(s.ctx, saCfg, config.HubNamespace, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, cancel := context.WithCancel(s.ctx)
	// The hub records the watcher's events with its manager's recorder;
	// this one writes them as the same ServiceAccount.
	saClient, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: saClient.EventsV1()})
	broadcaster.StartRecordingToSink(watchCtx.Done())
	watcher.Recorder = broadcaster.NewRecorder(clientgoscheme.Scheme, "ocm-hub-controller")
	watched := make(chan error, 1)
	go func() { watched <- watcher.Start(watchCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-watched; err != nil {
			t.Errorf("TLS profile watcher: %v", err)
		}
	})
	// The API server converts through the webhook with TLS 1.3 in force:
	// startWebhook waits for it.
	s.startWebhook(t, addonconversion.Options{TLSOpts: []func(*tls.Config){
		func(c *tls.Config) { c.ClientAuth = tls.RequestClientCert }, profile.ServerOption(),
	}})
	require.ErrorContains(t, s.dial(t, tls.VersionTLS12), "protocol version", "TLS 1.2 client with VersionTLS13 in force")
	if err := s.dial(t, tls.VersionTLS13); err != nil {
		t.Fatalf("TLS 1.3 client with VersionTLS13 in force: %v", err)
	}

	s.setMinVersion(t, cm, "TLS1.2")
	framework.Eventually(s.ctx, t, 30*time.Second, "the bad profile logged", func(context.Context) (bool, error) {
		return strings.Contains(logs.String(), `\"TLS1.2\" is not a TLS version: use VersionTLS10`), nil
	})
	framework.Eventually(s.ctx, t, 30*time.Second, "a Warning event on the ConfigMap", func(ctx context.Context) (bool, error) {
		list, err := s.hub.Clientset().EventsV1().Events(config.HubNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == tlsprofile.ConfigMapName && e.Reason == tlsprofile.ReasonInvalid &&
				strings.Contains(e.Note, `"TLS1.2" is not a TLS version`) && strings.Contains(e.Note, "the profile in force stays: VersionTLS13") {
				return true, nil
			}
		}
		return false, nil
	})
	if err := s.dial(t, tls.VersionTLS12); err == nil {
		t.Fatalf("TLS 1.2 client served after a bad profile: VersionTLS13 should stay in force")
	}
	if got := profile.Profile().MinVersion; got != tls.VersionTLS13 {
		t.Fatalf("profile in force after a bad change: %s, want VersionTLS13", tlsprofile.VersionName(got))
	}

	s.setMinVersion(t, cm, "VersionTLS12")
	framework.Eventually(s.ctx, t, 30*time.Second, "a TLS 1.2 client served after the change to VersionTLS12", func(context.Context) (bool, error) {
		return s.dial(t, tls.VersionTLS12) == nil, nil
	})
	if err := conversion.ProbeAll(s.ctx, s.admin); err != nil {
		t.Fatalf("conversion after the profile changed: %v", err)
	}
}

// setMinVersion writes minTLSVersion of cm.
func (s *suite) setMinVersion(t *testing.T, cm *corev1.ConfigMap, version string) {
	t.Helper()
	cm.Data[tlsprofile.MinTLSVersionKey] = version
	if err := s.admin.Update(s.ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// dial shakes hands with the webhook's server as a client of at most
// maxVersion that trusts the webhook's CA.
func (s *suite) dial(t *testing.T, maxVersion uint16) error {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.secret(t).Data[servingcert.CABundleKey]) {
		t.Fatal("no CA in the webhook's Secret")
	}
	host, _, err := net.SplitHostPort(s.bind)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", s.bind,
		&tls.Config{RootCAs: pool, ServerName: host, MaxVersion: maxVersion})
	if err != nil {
		return err
	}
	return conn.Close()
}
