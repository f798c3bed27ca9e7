package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8765": true,
		"[::1]:8765":     true,
		"localhost:8765": true,
		"0.0.0.0:8765":   false,
		"10.1.2.3:8765":  false,
		"example.com:80": false,
		"8765":           false,
	} {
		err := CheckListen(addr, false)
		if (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok %v", addr, err, ok)
		}
	}
	assert.NoError(t, CheckListen("0.0.0.0:8765", true), "any address with TLS")
	assert.ErrorContains(t, CheckListen("0.0.0.0:8765", false), "--tls-cert-file")
}

func TestOptionsValidate(t *testing.T) {
	base := func() *Options {
		return &Options{CallTimeout: DefaultCallTimeout, MaxResultBytes: DefaultMaxBytes, SessionTimeout: DefaultSessionTimeout}
	}
	assert.NoError(t, base().Validate())
	o := base()
	o.TLSCertFile = "tls.crt"
	assert.ErrorContains(t, o.Validate(), "go together")
	o.TLSKeyFile = "tls.key"
	assert.ErrorContains(t, o.Validate(), "needs --listen")
	o = base()
	o.MaxResultBytes = 10
	assert.ErrorContains(t, o.Validate(), "--max-result-bytes")
	o = base()
	o.SessionTimeout = 0
	assert.ErrorContains(t, o.Validate(), "--session-timeout")
	o = base()
	o.Listen = "0.0.0.0:1"
	assert.ErrorContains(t, o.Validate(), "not a loopback address")
}

func TestBearerToken(t *testing.T) {
	for value, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "Bearer ": "", "": ""} {
		h := http.Header{}
		if value != "" {
			h.Set("Authorization", value)
		}
		got, ok := BearerToken(h)
		if got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", value, got, ok, want)
		}
	}
}

// TestHandlerNeedsAToken refuses a request without a bearer token before
// the protocol sees it.
func TestHandlerNeedsAToken(t *testing.T) {
	srv := httptest.NewServer(handler(t, Config{Hub: &rest.Config{Host: "https://hub.invalid"}, HTTP: true}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
}

// handler returns the HTTP handler of a server configured by cfg.
func handler(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	h, err := Handler(NewServer(cfg), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCheckHTTPHub refuses to send callers' tokens to a hub that is not
// verified, over the handler and each call.
func TestCheckHTTPHub(t *testing.T) {
	for _, tc := range []struct {
		hub     *rest.Config
		wantErr string
	}{
		{hub: &rest.Config{Host: "https://hub.example.com:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}},
		{hub: &rest.Config{Host: "hub.example.com:6443"}},
		{hub: &rest.Config{Host: "https://hub.example.com:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, wantErr: "put the hub's CA in the kubeconfig (certificate-authority-data) and drop insecure-skip-tls-verify"},
		{hub: &rest.Config{Host: "http://hub.example.com:8080"}, wantErr: "is plain HTTP"},
		{hub: &rest.Config{Host: "HTTP://hub.example.com:8080"}, wantErr: "is plain HTTP"},
	} {
		err := CheckHTTPHub(tc.hub)
		if tc.wantErr == "" {
			assert.NoError(t, err, tc.hub.Host)
			continue
		}
		assert.ErrorContains(t, err, tc.wantErr, tc.hub.Host)
		cfg := Config{Hub: tc.hub, HTTP: true}
		_, err = Handler(NewServer(cfg), cfg)
		assert.ErrorContains(t, err, tc.wantErr, "the handler of "+tc.hub.Host)
		s := &server{cfg: cfg}
		req := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"Bearer abc"}}}}
		_, err = s.hubConfig(req)
		assert.ErrorContains(t, err, tc.wantErr, "a call with "+tc.hub.Host)
	}
}

func TestBoundItems(t *testing.T) {
	items := []string{"aaaa", "bbbb", "cccc", "dddd"}
	size := func(s []string) int { return jsonSize(s) }
	got, note := boundItems(items, 1000, "narrow it", size)
	assert.Equal(t, items, got)
	assert.Empty(t, note)
	got, note = boundItems(items, size(items[:2]), "narrow it", size)
	assert.Equal(t, items[:2], got)
	assert.Contains(t, note, "2 of 4 shown; narrow it")
	assert.Equal(t, "ab…[cut]", truncate("abcdefghijklmnop", 10))
	assert.Equal(t, "short", truncate("short", 10))
}

// TestHandlerRefusesCrossOrigin refuses a browser's cross-origin request,
// token or not.
func TestHandlerRefusesCrossOrigin(t *testing.T) {
	srv := httptest.NewServer(handler(t, Config{Hub: &rest.Config{Host: "https://hub.invalid"}, HTTP: true}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer abc")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestBounded(t *testing.T) {
	v, err := bounded("limit", 0, 100, 1000)
	assert.NoError(t, err)
	assert.Equal(t, 100, v)
	_, err = bounded("limit", 1001, 100, 1000)
	assert.ErrorContains(t, err, "limit 1001 is outside 1..1000")
	_, err = bounded("limit", -1, 100, 1000)
	assert.Error(t, err)
}

func TestDiffPaths(t *testing.T) {
	a := map[string]any{"replicas": 2.0, "template": map[string]any{"containers": []any{map[string]any{"image": "a:1", "name": "c"}}}}
	b := map[string]any{"replicas": 3.0, "template": map[string]any{"containers": []any{map[string]any{"image": "a:2", "name": "c"}}}, "paused": true}
	assert.Equal(t, []string{"paused", "replicas", "template.containers[0].image"}, diffPaths("", a, b, 20))
	assert.Len(t, diffPaths("", a, b, 2), 2)
	assert.Nil(t, diffPaths("", a, a, 20))
	assert.Equal(t, []string{"(the whole object)"}, diffPaths("", "x", 1.0, 20))
}

func TestImagesAndReplicas(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "web:1.2"}, map[string]any{"image": "proxy:9"}}}}},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
	assert.Equal(t, []string{"web:1.2", "proxy:9"}, images(deploy))
	assert.Equal(t, "2/3", replicas(deploy))
	pod := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "busybox"}}}}}
	assert.Equal(t, []string{"busybox"}, images(pod))
	assert.Empty(t, replicas(pod))
}
