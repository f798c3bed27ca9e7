// Package turnwait writes and reads the line a test logs when it waited for
// its turn to run beside others (test/e2e's fleets), so that
// hack/testreport counts the test's time from its turn, not from its start.
package turnwait

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const prefix = "waited for its turn: "

// Line is what a test logs after waiting d for its turn.
func Line(d time.Duration) string {
	return fmt.Sprintf("%s%.1fs", prefix, d.Seconds())
}

// Parse returns the seconds a line of a test's output says it waited, and
// whether the line says so.
func Parse(output string) (float64, bool) {
	i := strings.Index(output, prefix)
	if i < 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(output[i+len(prefix):]), "s"), 64)
	return v, err == nil
}
