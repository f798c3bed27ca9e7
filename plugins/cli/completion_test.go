package cli

import (
	"strings"
	"testing"
)

func TestCompleteLast(t *testing.T) {
	names := []string{"cluster1", "cluster2", "edge"}
	for _, tt := range []struct {
		in   string
		want string
	}{{"", "cluster1 cluster2 edge"}, {"cl", "cluster1 cluster2"}, {"cluster1,", "cluster1,cluster2 cluster1,edge"}, {"edge,cluster2,c", "edge,cluster2,cluster1"}} {
		if got := strings.Join(CompleteLast(names, tt.in), " "); got != tt.want {
			t.Errorf("CompleteLast(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
