package agent

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestRateLimited checks that the work agent's clients of the managed
// cluster get its own limits, on a copy, with limiters of their own.
func TestRateLimited(t *testing.T) {
	base := &rest.Config{Host: "https://managed:6443", QPS: 50, Burst: 100, RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter()}
	got := rateLimited(base, 7, 14)
	if got.QPS != 7 || got.Burst != 14 || got.RateLimiter != nil || got.Host != base.Host {
		t.Errorf("rateLimited = QPS %v burst %d limiter %v host %s, want 7, 14, none, %s", got.QPS, got.Burst, got.RateLimiter, got.Host, base.Host)
	}
	if base.QPS != 50 || base.Burst != 100 || base.RateLimiter == nil {
		t.Errorf("the base configuration changed: QPS %v burst %d limiter %v", base.QPS, base.Burst, base.RateLimiter)
	}
}

// TestOptionsDefault checks the defaults of the rate limits.
func TestOptionsDefault(t *testing.T) {
	o := Options{}
	o.Default()
	if o.KubeQPS != DefaultKubeQPS || o.KubeBurst != DefaultKubeBurst || o.HubQPS != DefaultHubQPS || o.HubBurst != DefaultHubBurst {
		t.Errorf("defaults: kube %v/%d, hub %v/%d", o.KubeQPS, o.KubeBurst, o.HubQPS, o.HubBurst)
	}
	o = Options{KubeQPS: 3, KubeBurst: 6}
	o.Default()
	if o.KubeQPS != 3 || o.KubeBurst != 6 {
		t.Errorf("set limits changed: %v/%d", o.KubeQPS, o.KubeBurst)
	}
}
