package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamePrefix(t *testing.T) {
	long := strings.Repeat("a", 199)
	tests := []struct {
		name, in, want string
	}{
		{"short", "web", "web"},
		{"200", strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{"cut", long + "bcd", long + "b"},
		{"cut at a dash", long + "-cd", long},
		{"cut at a dot", strings.Repeat("a", 198) + ".-x", strings.Repeat("a", 198)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, NamePrefix(tt.in))
		})
	}
}
