package hubtunnel

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStripCredentials(t *testing.T) {
	h := http.Header{}
	for _, name := range []string{"Authorization", "Proxy-Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid",
		"Impersonate-Extra-Scopes", "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-Foo", UserHeader, GroupHeader} {
		h.Set(name, "x")
	}
	h["impersonate-user"] = []string{"lower-case, not canonical"}
	h.Set("Accept", "application/json")
	StripCredentials(h)
	assert.Equal(t, http.Header{"Accept": {"application/json"}}, h)

	// A client that authenticated to the hub otherwise may still send a
	// token as a WebSocket subprotocol, and cookies: neither reaches the
	// agent; the other subprotocols do.
	h = http.Header{}
	h.Set("Cookie", "session=secret")
	h["Sec-WebSocket-Protocol"] = []string{"v5.channel.k8s.io, base64url.bearer.authorization.k8s.io.c2VjcmV0", "Base64url.Bearer.Authorization.k8s.io.eA"}
	StripCredentials(h)
	assert.Equal(t, http.Header{"Sec-WebSocket-Protocol": {"v5.channel.k8s.io"}}, h)
	h = http.Header{"Sec-WebSocket-Protocol": {"base64url.bearer.authorization.k8s.io.c2VjcmV0"}}
	StripCredentials(h)
	assert.Empty(t, h)
}

func TestMapping(t *testing.T) {
	assert.Equal(t, "ocm:hub:alice", MappedUser("alice"))
	assert.Equal(t, []string{"ocm:hub:devs", "ocm:hub:system:authenticated"}, MappedGroups([]string{"devs", "system:authenticated"}))
	assert.Equal(t, "/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/c1/proxy", ProxyPath("c1"))
	for method, verb := range map[string]string{"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"} {
		assert.Equal(t, verb, ProxyVerb(method), method)
	}
}

func TestServerURL(t *testing.T) {
	tests := []struct {
		name    string
		hub     string
		want    string
		wantErr string
	}{
		{name: "a hub at the root", hub: "https://hub.example.com:6443", want: "https://hub.example.com:6443" + ProxyPath("c1")},
		{name: "a hub under a path, its query dropped", hub: "https://lb.example.com/hub/?x=1#f", want: "https://lb.example.com/hub" + ProxyPath("c1")},
		{name: "an escaped path kept escaped", hub: "https://lb.example.com/a%2Fb", want: "https://lb.example.com/a%2Fb" + ProxyPath("c1")},
		{name: "no scheme", hub: "hub.example.com:6443", wantErr: `"hub.example.com:6443" is not a URL such as https://hub.example.com:6443`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ServerURL(tt.hub, "c1")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
