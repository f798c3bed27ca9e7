package benchkit

import (
	"strings"
)

// ParseList parses a comma-separated flag value, such as "20,500" or
// "1m,2m", with parse for each non-empty item (spaces around items are
// ignored); the first item parse rejects is the error.
func ParseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
