package mcp

import (
	"encoding/json"
	"fmt"
)

// DefaultMaxBytes bounds the JSON of one tool result.
const DefaultMaxBytes = 64 << 10

// boundItems returns the longest prefix of items whose JSON, within the
// result made by wrap, is at most max bytes, and the note to add when items
// were cut ("" when all fit). narrow says how to ask for fewer items.
func boundItems[T any](items []T, max int, narrow string, size func([]T) int) ([]T, string) {
	if size(items) <= max {
		return items, ""
	}
	lo, hi := 0, len(items)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if size(items[:mid]) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return items[:lo], fmt.Sprintf("cut to fit %d bytes: %d of %d shown; %s", max, lo, len(items), narrow)
}

// jsonSize returns the length of v's JSON; a value that cannot be encoded
// counts as unbounded.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return len(b)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…[cut]"
	cut := n - len(mark)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + mark
}
