package framework

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
)

func TestHTTPProxy(t *testing.T) {
	SkipIfShort(t)
	env := StartForTest(t, "hub")
	hub := env.Cluster("hub")
	p := StartHTTPProxyForTest(t, "127.0.0.1", hub)
	proxyURL, err := url.Parse(p.URL())
	require.NoError(t, err)

	byName := hub.RESTConfig()
	byName.Host = hub.HostnameURL()

	t.Run("the cluster's hostname resolves nowhere but in the proxy", func(t *testing.T) {
		_, err := kubernetes.NewForConfigOrDie(byName).Discovery().ServerVersion()
		require.Error(t, err, "reached %s without the proxy", byName.Host)
		assert.Zero(t, p.Tunnels(strings.TrimPrefix(byName.Host, "https://")))
	})

	t.Run("a client through the proxy reaches the cluster by its hostname, and the proxy counts the tunnel", func(t *testing.T) {
		cfg := *byName
		cfg.Proxy = http.ProxyURL(proxyURL)
		info, err := kubernetes.NewForConfigOrDie(&cfg).Discovery().ServerVersion()
		require.NoError(t, err)
		assert.NotEmpty(t, info.GitVersion)
		assert.Equal(t, 1, p.Tunnels(strings.TrimPrefix(byName.Host, "https://")))
	})

	t.Run("a request that is not CONNECT is refused", func(t *testing.T) {
		resp, err := http.Get(p.URL() + "/version")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}
