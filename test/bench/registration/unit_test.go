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
		{lease: 10 * time.Second, wantEarliest: 12250 * time.Millisecond, wantLast: 15 * time.Second},
		{lease: 60 * time.Second, wantEarliest: 73500 * time.Millisecond, wantLast: 90 * time.Second},
	}
	for _, tt := range tests {
		earliest, latest := expectedDetection(tt.lease)
		if earliest != tt.wantEarliest || latest != tt.wantLast {
			t.Errorf("expectedDetection(%s) = %s, %s; want %s, %s", tt.lease, earliest, latest, tt.wantEarliest, tt.wantLast)
		}
	}
}
