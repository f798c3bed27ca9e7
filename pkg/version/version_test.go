package version

import (
	"regexp"
	"strings"
	"testing"
)

// tagPattern is the grammar of an image tag (distribution's reference
// grammar).
var tagPattern = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)

func TestImageTag(t *testing.T) {
	tests := []struct {
		version, want string
	}{
		{"v0.1.0", "v0.1.0"},
		{"v0.1.0-3-gabc1234", "v0.1.0-3-gabc1234"},
		{"v0.1.0-3-gabc1234-dirty", "v0.1.0-3-gabc1234-dirty"},
		{"cf34dfa-dirty", "cf34dfa-dirty"},
		{"v0.0.0-dev", "v0.0.0-dev"},
		{"v1.2.3+build.7", "v1.2.3-build.7"},
		{"-x", "_x"},
		{"", "v0.0.0-dev"},
		{strings.Repeat("a", 200), strings.Repeat("a", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got := ImageTag(tt.version)
			if got != tt.want {
				t.Errorf("ImageTag(%q) = %q, want %q", tt.version, got, tt.want)
			}
			if !tagPattern.MatchString(got) {
				t.Errorf("ImageTag(%q) = %q is not a valid tag", tt.version, got)
			}
		})
	}
}

func TestModuleVersion(t *testing.T) {
	tests := []struct {
		name, stamped, module, want string
	}{
		{"stamped by the linker", "v0.2.0", "v0.1.0", "v0.2.0"},
		{"go install of a version", unstamped, "v0.1.0", "v0.1.0"},
		{"go install of a commit", unstamped, "v0.1.1-0.20261122000000-abcdef123456", "v0.1.1-0.20261122000000-abcdef123456"},
		{"built in the source tree", unstamped, "(devel)", unstamped},
		{"no build information", unstamped, "", unstamped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moduleVersion(tt.stamped, tt.module); got != tt.want {
				t.Errorf("moduleVersion(%q, %q) = %q, want %q", tt.stamped, tt.module, got, tt.want)
			}
		})
	}
}
