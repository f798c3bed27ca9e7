package mcpcli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	ocmmcp "github.com/kubectl-ocm/kubectl-ocm/plugins/mcp"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/mcptest"
)

// httpCaller checks that over HTTP each request's token is the caller.
func (fx *mcpFixture) httpCaller(t *testing.T) {
	ctx, hub, admin := fx.ctx, fx.hub, fx.admin
	grantViewer(ctx, t, admin, "assistant")
	kit.MustCreate(ctx, t, admin, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stranger"}})
	srv := httptest.NewServer(handler(t, ocmmcp.Config{Hub: hub.RESTConfig(), HTTP: true}))
	t.Cleanup(srv.Close)
	token := func(sa string) string {
		cfg, err := hub.ConfigForServiceAccount(ctx, "default", sa, time.Hour)
		kit.Must(t, "token of "+sa, err)
		return cfg.BearerToken
	}
	assistant := mcptest.Connect(ctx, t, nil, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: withToken(token("assistant"))})
	var out ocmmcp.FleetOutput
	mcptest.Call(ctx, t, assistant, "fleet_overview", nil, &out)
	if out.Total != 3 {
		t.Errorf("the assistant sees %d clusters, want 3", out.Total)
	}
	stranger := mcptest.Connect(ctx, t, nil, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: withToken(token("stranger"))})
	if msg := mcptest.CallError(ctx, t, stranger, "fleet_overview", nil); !strings.Contains(msg, `"system:serviceaccount:default:stranger" cannot list resource "managedclusters"`) {
		t.Errorf("stranger: %q, want the hub's 403 for its own identity", msg)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "anonymous"}, nil)
	_, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	assert.ErrorContains(t, err, "Unauthorized", "a client without a token")

	t.Run("a token the hub does not accept opens no session", func(t *testing.T) {
		// The request is good: with the assistant's token it opens a session.
		if status, session, body := post(ctx, t, srv.URL, token("assistant"), "", initialize); status != http.StatusOK || session == "" {
			t.Fatalf("the assistant's initialize: %d, session %q: %s", status, session, body)
		}
		kit.MustCreate(ctx, t, admin, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "deleted"}})
		deleted := token("deleted")
		kit.Must(t, "delete ServiceAccount deleted", admin.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "deleted"}}))
		framework.Eventually(ctx, t, time.Minute, "the deleted ServiceAccount's token refused by the hub", func(ctx context.Context) (bool, error) {
			status, _, _ := post(ctx, t, srv.URL, deleted, "", initialize)
			return status == http.StatusUnauthorized, nil
		})
		for name, tok := range map[string]string{"junk": "x", "a forged token": strings.Repeat("eyJhbGciOiJSUzI1NiJ9.", 2) + "c2ln", "a deleted ServiceAccount's token": deleted} {
			status, session, body := post(ctx, t, srv.URL, tok, "", initialize)
			if status != http.StatusUnauthorized || session != "" || !strings.Contains(body, "the hub does not accept the bearer token") {
				t.Errorf("%s: %d, session %q, %q; want 401, no session, the hub's refusal", name, status, session, body)
			}
		}
	})

	t.Run("a session is its user's", func(t *testing.T) {
		tok := &switchable{}
		tok.set(token("assistant"))
		cs := mcptest.Connect(ctx, t, nil, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: tok}})
		// Another token of the same user carries on the session.
		tok.set(token("assistant"))
		var out ocmmcp.FleetOutput
		mcptest.Call(ctx, t, cs, "fleet_overview", nil, &out)
		// Another user's token cannot, though the hub accepts it.
		status, _, body := post(ctx, t, srv.URL, token("stranger"), cs.ID(), toolsList)
		if status != http.StatusForbidden || !strings.Contains(body, "session user mismatch") {
			t.Errorf("the stranger on the assistant's session: %d %q, want 403", status, body)
		}
		mcptest.Call(ctx, t, cs, "fleet_overview", nil, &out)
	})

	t.Run("an idle session closes", func(t *testing.T) {
		cfg := ocmmcp.Config{Hub: hub.RESTConfig(), HTTP: true, SessionTimeout: 2 * time.Second}
		srv := httptest.NewServer(handler(t, cfg))
		t.Cleanup(srv.Close)
		cs := mcptest.Connect(ctx, t, nil, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: withToken(token("assistant"))})
		// The stranger's requests, refused, do not keep it open.
		stranger := token("stranger")
		framework.Eventually(ctx, t, time.Minute, "the idle session closed", func(ctx context.Context) (bool, error) {
			status, _, _ := post(ctx, t, srv.URL, stranger, cs.ID(), toolsList)
			return status == http.StatusNotFound, nil
		})
	})
}

// httpUnverified checks that over HTTP a hub whose certificate is not verified
// is refused.
func (fx *mcpFixture) httpUnverified(t *testing.T) {
	ctx, hub, env := fx.ctx, fx.hub, fx.env
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const fix = "put the hub's CA in the kubeconfig (certificate-authority-data) and drop insecure-skip-tls-verify"
	clitest.ExpectErr(t, clitest.CLI{Kubeconfig: env.Kubeconfig()}.Run(ctx, "mcp", "--listen", "127.0.0.1:0", "--insecure-skip-tls-verify"), fix)
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig())
	kit.Must(t, "read the kubeconfig", err)
	for _, c := range kc.Clusters {
		c.InsecureSkipTLSVerify, c.CertificateAuthorityData = true, nil
	}
	insecure := filepath.Join(t.TempDir(), "kubeconfig")
	kit.Must(t, "write the kubeconfig", clientcmd.WriteToFile(*kc, insecure))
	clitest.ExpectErr(t, clitest.CLI{Kubeconfig: insecure}.Run(ctx, "mcp", "--listen", "127.0.0.1:0"), fix)
	insecureHub := rest.CopyConfig(hub.RESTConfig())
	insecureHub.Insecure, insecureHub.CAData = true, nil
	_, err = ocmmcp.Handler(ocmmcp.NewServer(ocmmcp.Config{Hub: insecureHub, HTTP: true}), ocmmcp.Config{Hub: insecureHub, HTTP: true})
	assert.ErrorContains(t, err, fix, "the handler of an unverified hub")
}

// The MCP messages the HTTP tests send as they are.
const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	toolsList  = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
)

// handler returns the HTTP handler of a server configured by cfg.
func handler(t *testing.T, cfg ocmmcp.Config) http.Handler {
	t.Helper()
	h, err := ocmmcp.Handler(ocmmcp.NewServer(cfg), cfg)
	kit.Must(t, "the MCP handler", err)
	return h
}

// post sends message to the MCP server at url with token, on session when
// set, and returns the answer's status, the session it names, and the
// start of its body when it is an error.
func post(ctx context.Context, t *testing.T, url, token, session, message string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(message))
	kit.Must(t, "make the request", err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	kit.Must(t, "post to the MCP server", err)
	defer resp.Body.Close()
	var body []byte
	if resp.StatusCode >= 400 {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(body)
}

// grantViewer creates ServiceAccount default/name with read access to the
// clusters, add-ons and works of the hub.
func grantViewer(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	kit.MustCreate(ctx, t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	kit.MustCreate(ctx, t, c, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{addonv1alpha1.GroupVersion.Group}, Resources: []string{"managedclusteraddons"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{workv1.GroupVersion.Group}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list"}},
	}})
	kit.MustCreate(ctx, t, c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer-" + name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleet-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}})
}

// switchable is a RoundTripper that sends the bearer token last set.
type switchable struct {
	token atomic.Pointer[string]
}

func (s *switchable) set(token string) { s.token.Store(&token) }

func (s *switchable) RoundTrip(r *http.Request) (*http.Response, error) {
	return bearer{token: *s.token.Load(), next: http.DefaultTransport}.RoundTrip(r)
}

// withToken returns an HTTP client that sends token as a bearer token.
func withToken(token string) *http.Client {
	return &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
