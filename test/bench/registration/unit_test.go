package registration

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The unit tests cover the harness's own arithmetic and parsing; they start
// no control planes and run under plain `go test` and -short.

func TestQuantile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{name: "median of five is the third", xs: []float64{5, 1, 4, 2, 3}, q: 0.5, want: 3},
		{name: "median of four is the lower middle", xs: []float64{4, 1, 3, 2}, q: 0.5, want: 2},
		{name: "max", xs: []float64{0.9, 1.4, 1.1}, q: 1, want: 1.4},
		{name: "one value", xs: []float64{2.5}, q: 0.5, want: 2.5},
		{name: "tiny q is the min", xs: []float64{3, 2, 1}, q: 0.01, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.xs, tt.q); got != tt.want {
				t.Errorf("quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
	if got := quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile(nil) = %v, want NaN", got)
	}
}

func TestParseProcStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    procMemory
		wantErr bool
	}{
		{
			name:   "typical",
			status: "Name:\tocm-controller\nVmPeak:\t 1300000 kB\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\nThreads:\t12\n",
			want:   procMemory{rss: 40 << 20, hwm: 60 << 20},
		},
		{name: "no memory lines (kernel thread)", status: "Name:\tkthreadd\nThreads:\t1\n", wantErr: true},
		{name: "garbled value", status: "VmHWM:\t1 kB\nVmRSS:\tlots kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStatus(strings.NewReader(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"hub", "--metrics-bind-address=127.0.0.1:4000", "--health-probe-bind-address", "127.0.0.1:4001"}
	for name, want := range map[string]string{
		"--metrics-bind-address":      "127.0.0.1:4000",
		"--health-probe-bind-address": "127.0.0.1:4001",
		"--leader-elect":              "",
	} {
		if got := flagValue(args, name); got != want {
			t.Errorf("flagValue(%s) = %q, want %q", name, got, want)
		}
	}
}

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
