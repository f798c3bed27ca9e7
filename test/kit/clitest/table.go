package clitest

import (
	"bytes"
	"slices"
	"strings"
	"sync"
)

// Row returns the fields of the first line of table whose first field is
// first, or nil.
func Row(table, first string) []string {
	for line := range strings.SplitSeq(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// HasRow reports whether a line of table starts with the fields want.
func HasRow(table string, want ...string) bool {
	for line := range strings.SplitSeq(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
			return true
		}
	}
	return false
}

// SyncBuffer is a bytes.Buffer safe for one writer and one reader: the
// stream of a command that runs while the test reads what it wrote.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
