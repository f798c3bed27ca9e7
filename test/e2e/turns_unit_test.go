package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTurnsInOrder checks that turns go to tests in the order they queued,
// at most n at once.
func TestTurnsInOrder(t *testing.T) {
	q := &turns{free: 2}
	a, b, c, d := q.take(), q.take(), q.take(), q.take()
	require.True(t, isClosed(a) && isClosed(b), "the first two turns are free at once")
	require.False(t, isClosed(c) || isClosed(d), "no third turn while two run")
	q.give()
	require.True(t, isClosed(c), "the third in the queue is next")
	require.False(t, isClosed(d), "the fourth waits for another turn")
	q.give()
	require.True(t, isClosed(d))
	q.give()
	q.give()
	require.Equal(t, 2, q.free)
}

// isClosed reports whether c is closed now: turns are handed out by take
// and give themselves.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
