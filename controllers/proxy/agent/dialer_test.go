package agent

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// TestDialerTLSProfile dials a hub that stops at TLS 1.2: the default
// profile completes the handshake (the hub then answers the WebSocket
// upgrade with 404), a TLS 1.3 profile is refused in the handshake.
func TestDialerTLSProfile(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}}
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/attach"

	d, err := newDialer(cfg, tlsprofile.Profile{})
	require.NoError(t, err)
	_, resp, err := d.Dial(url, nil)
	require.Error(t, err, "the hub answers no WebSocket")
	require.NotNil(t, resp, "the TLS 1.2 handshake failed: %v", err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_ = resp.Body.Close()

	d, err = newDialer(cfg, tlsprofile.Profile{MinVersion: tls.VersionTLS13})
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), d.TLSClientConfig.MinVersion)
	_, resp, err = d.Dial(url, nil)
	require.Error(t, err)
	assert.Nil(t, resp, "a TLS 1.3 client shook hands with a TLS 1.2 hub")
	assert.ErrorContains(t, err, "protocol version")
}
