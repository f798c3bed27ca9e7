package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// kubeconfigFor writes a kubeconfig whose current context is the server at
// url, and returns ConfigFlags reading it.
func kubeconfigFor(t *testing.T, url string) *genericclioptions.ConfigFlags {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: `+url+`, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	return flags
}

// TestInitTLSFlags checks that --tls-min-version and --tls-cipher-suites
// become the ClusterManager's spec.tlsProfile, and that a bad value stops
// init before it sends the hub any request.
func TestInitTLSFlags(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := NewCmdHub(kubeconfigFor(t, "https://127.0.0.1:1"), streams)
	cmd.SetArgs([]string{"init", "--dry-run", "-o", "yaml", "--tls-min-version", "TLSv1.3", "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	require.NoError(t, cmd.ExecuteContext(context.Background()))
	objs, err := config.DecodeDocuments(out.Bytes())
	require.NoError(t, err)
	var profile map[string]any
	for _, obj := range objs {
		if obj.GetKind() == "ClusterManager" {
			profile, _, _ = unstructured.NestedMap(obj.Object, "spec", "tlsProfile")
		}
	}
	require.Equal(t, map[string]any{"minTLSVersion": "VersionTLS13", "cipherSuites": []any{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}, profile)

	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	cmd = NewCmdHub(kubeconfigFor(t, srv.URL), genericiooptions.NewTestIOStreamsDiscard())
	cmd.SetArgs([]string{"init", "--tls-min-version", "VersionTLS13", "--tls-cipher-suites", "TLS_RSA_WITH_RC4_128_SHA"})
	require.ErrorContains(t, cmd.ExecuteContext(context.Background()), `--tls-cipher-suites: insecure cipher suite "TLS_RSA_WITH_RC4_128_SHA" refused: spec.tlsProfile admits no minimum below VersionTLS12`)
	if n := requests.Load(); n != 0 {
		t.Errorf("init sent %d requests before refusing the flag", n)
	}
}
