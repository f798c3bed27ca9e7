package benchkit

import (
	"sync"
	"time"
)

// maxLatencySamples bounds the samples a LatencyWindow keeps: 10,000
// clusters renewing a 60 s lease fill it in about 100 minutes, longer than
// any window the scale harness takes. Samples beyond it are counted, not
// kept.
const maxLatencySamples = 1 << 20

// LatencyWindow collects the durations of one kind of request, as the
// simulated agents time them, from one Take to the next. It is safe for
// concurrent use.
type LatencyWindow struct {
	mu      sync.Mutex
	samples []float64
	dropped int
}

// Observe adds one duration to the window.
func (w *LatencyWindow) Observe(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.samples) >= maxLatencySamples {
		w.dropped++
		return
	}
	w.samples = append(w.samples, d.Seconds())
}

// Take returns the distribution of the durations observed since the last
// Take (or since the window was made), in seconds, and starts a new window.
func (w *LatencyWindow) Take() Summary {
	w.mu.Lock()
	samples, dropped := w.samples, w.dropped
	w.samples, w.dropped = nil, 0
	w.mu.Unlock()
	s := Summarize(samples)
	s.Count += dropped
	return s
}
