package turnwait

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLineParses(t *testing.T) {
	got, ok := Parse("    shared_test.go:131: " + Line(83*time.Second+400*time.Millisecond) + "\n")
	assert.True(t, ok)
	assert.InDelta(t, 83.4, got, 0.001)
	_, ok = Parse("    a_test.go:9: waited for the hub\n")
	assert.False(t, ok)
}
