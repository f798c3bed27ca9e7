package join

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// TestTLSFlagsReachTheKlusterlet checks that --tls-min-version and
// --tls-cipher-suites become the Klusterlet's spec.tlsProfile, the version
// in the spelling the field takes.
func TestTLSFlagsReachTheKlusterlet(t *testing.T) {
	for _, hosted := range []bool{false, true} {
		o := validOptions()
		if hosted {
			o.Mode, o.ManagedClusterKubeconfig = ModeHosted, "managed.kubeconfig"
		}
		o.TLSMinVersion, o.TLSCipherSuites = "TLSv1.3", []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}
		require.NoError(t, cli.CompleteValidate(o, nil, nil))
		objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
		require.NoError(t, err)
		var profile map[string]any
		for _, obj := range objs {
			if obj.GetKind() == "Klusterlet" {
				profile, _, _ = unstructured.NestedMap(obj.Object, "spec", "tlsProfile")
			}
		}
		require.Equal(t, map[string]any{
			"minTLSVersion": "VersionTLS13",
			"cipherSuites":  []any{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		}, profile, "hosted %v", hosted)
	}
}

// TestBadTLSFlagRefusedFirst checks that a bad TLS flag stops join before
// it sends any request: to the hub or to the cluster, which here is a
// server that counts what it receives.
func TestBadTLSFlagRefusedFirst(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: `+srv.URL+`, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	cmd := NewCmdJoin(flags, genericiooptions.NewTestIOStreamsDiscard())
	cmd.SetArgs([]string{"--hub-token", "token", "--hub-apiserver", srv.URL, "--insecure-skip-ca-verification", "--cluster-name", "cluster1",
		"--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,ECDHE-RSA-AES128-GCM-SHA256"})
	err := cmd.ExecuteContext(context.Background())
	require.ErrorContains(t, err, `--tls-cipher-suites: unknown cipher suite "ECDHE-RSA-AES128-GCM-SHA256"`)
	if n := requests.Load(); n != 0 {
		t.Errorf("join sent %d requests before refusing the flag", n)
	}
	assert.NotContains(t, err.Error(), "--hub-apiserver", "the error names other flags")
}
