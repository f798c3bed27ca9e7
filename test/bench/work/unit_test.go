package work

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// The unit tests cover the harness's own arithmetic and parsing; they start
// no control planes and run under plain `go test` and -short.

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("1000, 20,100,20")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{20, 100, 1000}; !slices.Equal(got, want) {
		t.Errorf("parseSizes = %v, want %v", got, want)
	}
	for _, bad := range []string{"x", "0", "-5"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q): no error", bad)
		}
	}
}

func TestRunConcurrently(t *testing.T) {
	seen := make([]bool, 50)
	var (
		mu             sync.Mutex
		inFlight, most int
	)
	err := runConcurrently(len(seen), 4, func(i int) error {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		seen[i] = true
		if i == 7 {
			return errors.New("seven")
		}
		return nil
	})
	if err == nil || err.Error() != "seven" {
		t.Errorf("err = %v, want seven", err)
	}
	if slices.Contains(seen, false) {
		t.Error("not every index was run after an error")
	}
	if most > 4 {
		t.Errorf("%d calls in flight, want at most 4", most)
	}
}
