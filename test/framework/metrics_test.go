package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleMetrics is a scrape with a counter, a gauge, a histogram and an
// untyped sample.
const sampleMetrics = `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="leases",verb="PUT"} 7
apiserver_request_total{code="200",resource="leases",verb="GET"} 3
apiserver_request_total{code="409",resource="leases",verb="PUT"} 1
apiserver_request_total{code="201",resource="configmaps",verb="POST"} 2
# TYPE workqueue_depth gauge
workqueue_depth{name="a"} 0
workqueue_depth{name="b"} 4
# TYPE rest_client_request_duration_seconds histogram
rest_client_request_duration_seconds_bucket{verb="GET",le="1"} 5
rest_client_request_duration_seconds_bucket{verb="GET",le="+Inf"} 6
rest_client_request_duration_seconds_sum{verb="GET"} 0.5
rest_client_request_duration_seconds_count{verb="GET"} 6
go_goroutines 42
`

func TestMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(sampleMetrics))
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"apiserver_request_total", nil, 13},
		{"apiserver_request_total", map[string]string{"verb": "PUT"}, 8},
		{"apiserver_request_total", map[string]string{"verb": "PUT", "code": "200"}, 7},
		{"apiserver_request_total", map[string]string{"verb": "DELETE"}, 0},
		{"workqueue_depth", nil, 4},
		{"rest_client_request_duration_seconds", map[string]string{"verb": "GET"}, 6},
		{"go_goroutines", nil, 42},
		{"absent_metric", nil, 0},
	} {
		require.Equal(t, tt.want, m.Sum(tt.name, tt.match), "%s %v", tt.name, tt.match)
	}
	byVerb := map[string]float64{}
	m.Each("apiserver_request_total", func(l map[string]string, v float64) { byVerb[l["verb"]] += v })
	require.Equal(t, map[string]float64{"PUT": 8, "GET": 3, "POST": 2}, byVerb)

	_, err = ParseMetrics(strings.NewReader("workqueue_depth{name=\"a\" 1\n"))
	require.Error(t, err, "a garbled line")
}

func TestScrapeMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.Error(w, "no such page", http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(sampleMetrics))
	}))
	defer srv.Close()
	m, err := ScrapeMetrics(context.Background(), srv.Client(), srv.URL+"/metrics")
	require.NoError(t, err)
	require.Equal(t, 42.0, m.Sum("go_goroutines", nil))
	_, err = ScrapeMetrics(context.Background(), srv.Client(), srv.URL+"/other")
	require.ErrorContains(t, err, "404")
}
