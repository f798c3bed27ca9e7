package work

import (
	"slices"
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
	if err := runConcurrently(len(seen), 4, func(i int) error { seen[i] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(seen, false) {
		t.Error("not every index was run")
	}
}
