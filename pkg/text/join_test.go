package text

import "testing"

func TestJoinLimited(t *testing.T) {
	for _, tt := range []struct {
		items []string
		sep   string
		limit int
		want  string
	}{
		{nil, ", ", 3, ""},
		{[]string{"b", "a"}, ", ", 3, "a, b"},
		{[]string{"d", "c", "b", "a"}, ", ", 2, "a, b and 2 more"},
		{[]string{"d", "c", "b", "a"}, "; ", 3, "a; b; c; and 1 more"},
	} {
		if got := JoinLimited(tt.items, tt.sep, tt.limit); got != tt.want {
			t.Errorf("JoinLimited(%v, %q, %d) = %q, want %q", tt.items, tt.sep, tt.limit, got, tt.want)
		}
	}
}
