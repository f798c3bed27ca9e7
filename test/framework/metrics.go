package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// Metrics is one scrape of a Prometheus /metrics endpoint in the text
// exposition format, by metric family name.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses the Prometheus text exposition format.
func ParseMetrics(r io.Reader) (Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return families, nil
}

// ScrapeMetrics reads url (a controller's plain-HTTP /metrics, say) with hc
// and parses it.
func ScrapeMetrics(ctx context.Context, hc *http.Client, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	m, err := ParseMetrics(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return m, nil
}

// ScrapeAPIServer reads the /metrics of the API server cfg points at, with
// cfg's credentials (the framework's admin may read it).
func ScrapeAPIServer(ctx context.Context, cfg *rest.Config) (Metrics, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return ScrapeMetrics(ctx, hc, strings.TrimSuffix(cfg.Host, "/")+"/metrics")
}

// Each calls fn with the labels and value of every sample of the counter,
// gauge or untyped family name; histograms and summaries give their sample
// count.
func (m Metrics) Each(name string, fn func(labels map[string]string, value float64)) {
	mf, ok := m[name]
	if !ok {
		return
	}
	for _, s := range mf.GetMetric() {
		labels := make(map[string]string, len(s.GetLabel()))
		for _, l := range s.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		fn(labels, sampleValue(s))
	}
}

// Sum adds the values of the samples of family name whose labels include
// every pair of match (nil matches all).
func (m Metrics) Sum(name string, match map[string]string) float64 {
	var sum float64
	m.Each(name, func(labels map[string]string, v float64) {
		for k, want := range match {
			if labels[k] != want {
				return
			}
		}
		sum += v
	})
	return sum
}

// sampleValue is the value of one sample: a counter's, gauge's or untyped
// value, a histogram's or summary's count.
func sampleValue(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	case s.Histogram != nil:
		return float64(s.GetHistogram().GetSampleCount())
	case s.Summary != nil:
		return float64(s.GetSummary().GetSampleCount())
	}
	return 0
}
