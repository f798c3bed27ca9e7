package hub

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
)

// testLogger sends controller logs to the test log.
func testLogger(t *testing.T) logr.Logger {
	return testr.NewWithOptions(t, testr.Options{Verbosity: 2})
}
