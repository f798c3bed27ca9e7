// Package text holds the wording rules that status messages and command
// output share.
package text

import (
	"fmt"
	"slices"
	"strings"
)

// JoinLimited sorts items, joins the first limit of them with sep and
// counts the rest: "a, b and 3 more" (sep ", ") or "a; b; and 3 more"
// (sep "; "). items is not changed.
func JoinLimited(items []string, sep string, limit int) string {
	s := slices.Sorted(slices.Values(items))
	if len(s) <= limit {
		return strings.Join(s, sep)
	}
	last := " and"
	if strings.TrimSpace(sep) != "," {
		last = sep + "and"
	}
	return fmt.Sprintf("%s%s %d more", strings.Join(s[:limit], sep), last, len(s)-limit)
}
