package framework

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// flowSchemaHeader is the response header an API server running API
// Priority and Fairness sets on every request it classifies.
const flowSchemaHeader = "X-Kubernetes-PF-FlowSchema-UID"

// TestPriorityAndFairness checks Options.PriorityAndFairness: the named
// cluster's API server classifies requests into flow schemas, the other's
// does not.
func TestPriorityAndFairness(t *testing.T) {
	SkipIfShort(t)
	env := StartForTestWith(t, Options{Clusters: []string{"hub", "c1"}, PriorityAndFairness: []string{"hub"}})
	for name, want := range map[string]bool{"hub": true, "c1": false} {
		cfg := env.Cluster(name).RESTConfig()
		hc, err := rest.HTTPClientFor(cfg)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+"/api/v1/namespaces", nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, want, resp.Header.Get(flowSchemaHeader) != "", "cluster %s: %s header %q", name, flowSchemaHeader, resp.Header.Get(flowSchemaHeader))
	}
}
