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

// TestPriorityAndFairnessAndProfiling checks Options.PriorityAndFairness
// and Options.Profiling: the named cluster's API server classifies requests
// into flow schemas and serves /debug/pprof, the other's does neither.
func TestPriorityAndFairnessAndProfiling(t *testing.T) {
	SkipIfShort(t)
	env := StartForTestWith(t, Options{Clusters: []string{"hub", "c1"}, PriorityAndFairness: []string{"hub"}, Profiling: []string{"hub"}})
	get := func(cfg *rest.Config, path string) *http.Response {
		hc, err := rest.HTTPClientFor(cfg)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	for name, want := range map[string]bool{"hub": true, "c1": false} {
		cfg := env.Cluster(name).RESTConfig()
		resp := get(cfg, "/api/v1/namespaces")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, want, resp.Header.Get(flowSchemaHeader) != "", "cluster %s: %s header %q", name, flowSchemaHeader, resp.Header.Get(flowSchemaHeader))
		assert.Equal(t, want, get(cfg, "/debug/pprof/").StatusCode == http.StatusOK, "cluster %s: /debug/pprof/ served", name)
	}
}
