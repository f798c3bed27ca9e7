package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// TestForwarderMapsIdentity sends what the hub sends through a tunnel, with
// every credential header a caller could forge, and checks what the
// managed cluster's API server receives: the agent's own credential and
// the mapped identity of the user the hub named, nothing else.
func TestForwarderMapsIdentity(t *testing.T) {
	var got http.Header
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		assert.Equal(t, "/api/v1/namespaces/a/pods", r.URL.Path)
		assert.Equal(t, "watch=1", r.URL.RawQuery)
	}))
	defer backend.Close()
	f, err := newForwarder(&rest.Config{Host: backend.URL, BearerToken: "agent-token"})
	require.NoError(t, err)

	req := httptest.NewRequest(http.MethodGet, "http://"+hubtunnel.AgentAddress+"/api/v1/namespaces/a/pods?watch=1", nil)
	req.Header.Set(hubtunnel.UserHeader, "alice")
	req.Header.Add(hubtunnel.GroupHeader, "devs")
	req.Header.Add(hubtunnel.GroupHeader, "system:authenticated")
	req.Header.Set("Authorization", "Bearer stolen")
	req.Header.Set("Impersonate-User", "system:admin")
	req.Header.Add("Impersonate-Group", "system:masters")
	req.Header.Set("Impersonate-Extra-Scopes", "all")
	req.Header.Set("X-Remote-User", "system:admin")
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	assert.Equal(t, "Bearer agent-token", got.Get("Authorization"))
	assert.Equal(t, []string{"ocm:hub:alice"}, got.Values("Impersonate-User"))
	assert.Equal(t, []string{"ocm:hub:devs", "ocm:hub:system:authenticated"}, got.Values("Impersonate-Group"))
	for _, h := range []string{"Impersonate-Extra-Scopes", "X-Remote-User", hubtunnel.UserHeader, hubtunnel.GroupHeader} {
		assert.Empty(t, got.Values(h), h)
	}
}

// TestForwarderNeedsAUser refuses a request for which the hub named no user.
func TestForwarderNeedsAUser(t *testing.T) {
	called := false
	backend := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	defer backend.Close()
	f, err := newForwarder(&rest.Config{Host: backend.URL})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+hubtunnel.AgentAddress+"/api", nil))
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.False(t, called, "a request without a user reached the API server")
}

func TestAttachURL(t *testing.T) {
	u, err := AttachURL("https://hub.example:6443/", "c1")
	require.NoError(t, err)
	assert.Equal(t, "wss://hub.example:6443/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/c1/attach", u)
	_, err = AttachURL("ftp://hub", "c1")
	assert.Error(t, err)
	_, err = AttachURL("http://hub.example:6443", "c1")
	assert.ErrorContains(t, err, "the scheme must be https", "a tunnel over ws:// sends the agent's token in clear")
}
