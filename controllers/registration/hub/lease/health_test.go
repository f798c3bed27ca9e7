package lease

import (
	"testing"
	"time"
)

func TestExpiry(t *testing.T) {
	renewed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		duration time.Duration
		ratio    float64
		want     time.Duration
	}{
		{"default 60s with 1.5", 60 * time.Second, 1.5, 90 * time.Second},
		{"2s with 1.5", 2 * time.Second, 1.5, 3 * time.Second},
		{"default ratio 2: the latest the contract allows", 60 * time.Second, DefaultGraceRatio, 120 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Expiry(renewed, tt.duration, tt.ratio).Sub(renewed); got != tt.want {
				t.Errorf("Expiry - renewed = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestClockSynced(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		renewed time.Time
		want    bool
	}{
		{"just renewed", now, true},
		{"agent slightly ahead", now.Add(30 * time.Second), true},
		{"agent five periods ahead", now.Add(5 * time.Minute), false},
		{"agent far behind", now.Add(-10 * time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClockSynced(tt.renewed, now, time.Minute); got != tt.want {
				t.Errorf("ClockSynced = %v, want %v", got, tt.want)
			}
		})
	}
}
