package registration

import (
	"testing"
	"time"
)

// The unit tests cover the harness's own arithmetic and parsing; they start
// no control planes and run under plain `go test` and -short.

func TestExpectedDetection(t *testing.T) {
	tests := []struct {
		lease                  time.Duration
		wantEarliest, wantLast time.Duration
	}{
		{lease: 10 * time.Second, wantEarliest: 9 * time.Second, wantLast: 20 * time.Second},
		{lease: 60 * time.Second, wantEarliest: 54 * time.Second, wantLast: 120 * time.Second},
	}
	for _, tt := range tests {
		earliest, latest := expectedDetection(tt.lease)
		if earliest != tt.wantEarliest || latest != tt.wantLast {
			t.Errorf("expectedDetection(%s) = %s, %s; want %s, %s", tt.lease, earliest, latest, tt.wantEarliest, tt.wantLast)
		}
	}
}

func TestDescribeWrites(t *testing.T) {
	tests := []struct {
		name   string
		counts map[string]int
		want   string
	}{
		{"none", nil, "none"},
		{"sorted by resource", map[string]int{"managedclusters": 1, "leases": 6}, "leases 3.00/min, managedclusters 0.50/min"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeWrites(tt.counts, 2*time.Minute); got != tt.want {
				t.Errorf("describeWrites = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLeaderTimings(t *testing.T) {
	tests := []struct {
		lease                            time.Duration
		wantRenew, wantRetry             time.Duration
		wantEarliest, wantLatestTakeover time.Duration
	}{
		// The product's defaults: 15 s, 10 s, 2 s; a retry waits up to 2.2 × 2 s.
		{lease: 15 * time.Second, wantRenew: 10 * time.Second, wantRetry: 2 * time.Second, wantEarliest: 15 * time.Second, wantLatestTakeover: 23800 * time.Millisecond},
		{lease: 6 * time.Second, wantRenew: 4 * time.Second, wantRetry: 800 * time.Millisecond, wantEarliest: 6 * time.Second, wantLatestTakeover: 9520 * time.Millisecond},
	}
	for _, tt := range tests {
		lease, renew, retry := leaderTimings(tt.lease)
		if lease != tt.lease || renew != tt.wantRenew || retry != tt.wantRetry {
			t.Errorf("leaderTimings(%s) = %s, %s, %s; want %s, %s, %s", tt.lease, lease, renew, retry, tt.lease, tt.wantRenew, tt.wantRetry)
		}
		earliest, latest := expectedTakeover(lease, retry)
		if earliest != tt.wantEarliest || latest != tt.wantLatestTakeover {
			t.Errorf("expectedTakeover(%s, %s) = %s, %s; want %s, %s", lease, retry, earliest, latest, tt.wantEarliest, tt.wantLatestTakeover)
		}
	}
}
