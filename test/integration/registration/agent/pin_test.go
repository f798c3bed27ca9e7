package agent_test

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// TestJoinPinsTheHub is the attack on join's discovery: a man in the middle
// between the joining cluster and a real hub, terminating TLS with its own
// CA (which it presents in its handshake) and relaying to the hub. With the
// hub's pin, join refuses before it sends the token, whether the impostor
// relays the hub's published CA bundle or publishes its own CA; the
// impostor sees only anonymous requests. --insecure-skip-ca-verification,
// the control, does send it the token, and says which CA it trusted.
func TestJoinPinsTheHub(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 3*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{clusterName}}, NoRunner: true})
	hub, spoke, token := f.Hub, f.Env.Cluster(clusterName), f.Token
	pins := hubPins(ctx, t, hub)
	flags := f.Flags(clusterName)

	// dryRun runs a client dry run of join against server.
	dryRun := func(server string, change func(o *join.Options)) (string, string, error) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		o := join.NewOptions(flags, streams)
		o.HubAPIServer, o.HubToken, o.ClusterName = server, token, clusterName
		o.DryRun, o.PrintFlags.OutputFormat = cli.DryRunClient, ptr.To("yaml")
		change(o)
		err := agenttest.RunJoin(ctx, o)
		return out.String(), errOut.String(), err
	}

	for _, ownBundle := range []bool{false, true} {
		name := "an impostor relaying the hub's CA bundle gets no token"
		if ownBundle {
			name = "an impostor publishing its own CA gets no token"
		}
		t.Run(name, func(t *testing.T) {
			imp := startImpostor(t, hub, ownBundle)
			out, _, err := dryRun(imp.URL(), func(o *join.Options) { o.CACertHashes = pins })
			require.ErrorContains(t, err, "is not the hub of --ca-cert-hash", "join through the impostor\n%s", out)
			require.ErrorContains(t, err, "join sent it nothing", "join through the impostor\n%s", out)
			assert.ErrorContains(t, err, certs.Pin(imp.ca), "the refusal names the CA the impostor offered")
			requests, credentials := imp.seen()
			if len(requests) == 0 {
				t.Fatal("join never asked the impostor anything: the test shows nothing")
			}
			if len(credentials) > 0 {
				t.Errorf("join sent the impostor credentials %q (requests %v)", credentials, requests)
			}
			for _, r := range requests {
				if !strings.HasPrefix(r, "GET ") {
					t.Errorf("join sent the impostor %s, want anonymous GETs only", r)
				}
			}
			if out != "" {
				t.Errorf("join printed %q although it refused", out)
			}
		})
	}

	t.Run("--insecure-skip-ca-verification trusts the impostor, and says so", func(t *testing.T) {
		imp := startImpostor(t, hub, true)
		out, errOut, err := dryRun(imp.URL(), func(o *join.Options) { o.InsecureSkipCAVerification = true })
		if err != nil {
			t.Fatalf("join --insecure-skip-ca-verification through the impostor: %v\n%s", err, errOut)
		}
		if want := "WARNING: --insecure-skip-ca-verification: trusting the CA " + certs.Pin(imp.ca); !strings.Contains(errOut, want) {
			t.Errorf("join warned %q, want %q", errOut, want)
		}
		// The recorder sees a token when one is sent: the refusals above
		// are not an artifact of the impostor.
		if _, credentials := imp.seen(); !slices.Contains(credentials, "Bearer "+token) {
			t.Errorf("the impostor saw credentials %q, want the token", credentials)
		}
		if !strings.Contains(out, "kind: Klusterlet") {
			t.Errorf("join printed no Klusterlet:\n%s", out)
		}
	})

	t.Run("the hub's pin joins the hub", func(t *testing.T) {
		out, errOut, err := dryRun(hub.Server(), func(o *join.Options) { o.CACertHashes = pins })
		if err != nil || strings.Contains(errOut, "WARNING") {
			t.Fatalf("join --ca-cert-hash with the hub's pin: %v\n%s", err, errOut)
		}
		if !strings.Contains(out, "name: "+"bootstrap-hub-kubeconfig") {
			t.Errorf("join printed no bootstrap kubeconfig:\n%s", out)
		}
	})

	// Nothing of the dry runs reached the managed cluster.
	if err := spoke.Client().Get(ctx, types.NamespacedName{Name: config.AgentNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s exists after dry runs (err %v)", config.AgentNamespace, err)
	}
}

// impostor is a TLS server with a CA of its own, presented in its
// handshake, that relays every request to a real hub and records the
// requests and the credentials it receives.
type impostor struct {
	srv *httptest.Server
	ca  *x509.Certificate

	mu          sync.Mutex
	requests    []string
	credentials []string
}

// startImpostor starts an impostor of hub; with ownBundle it answers an
// anonymous read of kube-public/kube-root-ca.crt with its own CA instead of
// relaying it.
func startImpostor(t *testing.T, hub *framework.Cluster, ownBundle bool) *impostor {
	t.Helper()
	caKey, _, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "impostor-ca"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}

	target, err := url.Parse(hub.Server())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(hub.CAData())
	relay := httputil.NewSingleHostReverseProxy(target)
	relay.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}

	imp := &impostor{ca: ca}
	imp.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		imp.mu.Lock()
		imp.requests = append(imp.requests, r.Method+" "+r.URL.Path)
		if a := r.Header.Get("Authorization"); a != "" {
			imp.credentials = append(imp.credentials, a)
		}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			imp.credentials = append(imp.credentials, "client certificate "+r.TLS.PeerCertificates[0].Subject.String())
		}
		imp.mu.Unlock()
		if ownBundle && r.URL.Path == "/api/v1/namespaces/kube-public/configmaps/"+certs.HubCABundleConfigMap {
			cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: certs.HubCABundleConfigMap},
				Data:       map[string]string{certs.HubCABundleKey: string(caPEM)}}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(cm)
			return
		}
		relay.ServeHTTP(w, r)
	}))
	imp.srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key}},
		ClientAuth:   tls.RequestClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	imp.srv.StartTLS()
	t.Cleanup(imp.srv.Close)
	return imp
}

// URL is the impostor's address.
func (i *impostor) URL() string { return i.srv.URL }

// seen returns the requests and the credentials the impostor received.
func (i *impostor) seen() (requests, credentials []string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]string(nil), i.requests...), append([]string(nil), i.credentials...)
}

// mustParseCertificates parses a PEM bundle.
func mustParseCertificates(t *testing.T, pemData []byte) []*x509.Certificate {
	t.Helper()
	cs, err := certs.ParseCertificates(pemData)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
