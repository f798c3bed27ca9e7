// Package cli holds what every kubectl-ocm verb shares: example formatting,
// printers, wait helpers and completion.
package cli

import "strings"

// Examples normalizes an indented example block the way kubectl does: the
// common leading indentation is removed and every line is indented by two spaces.
func Examples(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			lines[i] = ""
			continue
		}
		lines[i] = "  " + l[indent:]
	}
	return strings.Join(lines, "\n")
}
