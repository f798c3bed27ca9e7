package payload

import (
	"regexp"
	"strconv"
)

// chunksPattern finds the chunk counts Progress.String writes.
var chunksPattern = regexp.MustCompile(`\b(\d+) of (\d+) chunks \(`)

// ChunksPresent reads back, from a message that holds a Progress (such as
// the message of a work's PayloadStaged condition), how many chunks were
// present and verified, and of how many. ok is false when message holds no
// Progress.
func ChunksPresent(message string) (present, total int64, ok bool) {
	m := chunksPattern.FindStringSubmatch(message)
	if m == nil {
		return 0, 0, false
	}
	present, err1 := strconv.ParseInt(m[1], 10, 64)
	total, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return present, total, true
}
