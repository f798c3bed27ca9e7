package hub

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitFlagMistakes checks what `hub init` says about bad flags, before
// it sends any request: the cluster of its kubeconfig does not exist.
func TestInitFlagMistakes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		args []string
		// want are lines of the error; lines says how many it has, 0 for
		// any number.
		want  []string
		lines int
	}{
		{name: "bad dry run", args: []string{"--dry-run=true"},
			want: []string{"--dry-run true is not supported: use none, client or server"}, lines: 1},
		{name: "bad image", args: []string{"--image", "example.com/OCM:v1"},
			want: []string{`--image "example.com/OCM:v1" is not a valid image reference (such as quay.io/org/ocm-controller:v0.1.0)`}, lines: 1},
		{name: "bad image registry", args: []string{"--image-registry", "quay.io/org:v1"},
			want: []string{`--image-registry "quay.io/org:v1" does not make a valid image reference`}, lines: 1},
		{name: "bad TLS version", args: []string{"--tls-min-version", "1.3"},
			want: []string{`--tls-min-version: "1.3" is not a TLS version`}, lines: 1},
		{name: "no pull credentials", args: []string{"--image-pull-credentials", missing},
			want: []string{"--image-pull-credentials: cannot read " + missing}, lines: 1},
		{name: "bad monitoring namespace", args: []string{"--network-policy-monitoring-namespace", "Monitoring"},
			want: []string{`--network-policy-monitoring-namespace "Monitoring" is not a namespace name`}, lines: 1},
		{name: "short token", args: []string{"--duration", "1m"},
			want: []string{"--duration 1m0s is too short"}, lines: 1},
		{name: "bad dry run and bad image", args: []string{"--dry-run=true", "--image", "example.com/OCM:v1"},
			want: []string{"--dry-run true is not supported"}},
		{name: "bad output and bad TLS version", args: []string{"-o", "wide", "--tls-min-version", "1.3"},
			want: []string{`--output "wide" is not supported`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runInit(t, tt.args...)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.ErrorContains(t, err, want)
			}
			if tt.lines > 0 {
				assert.Len(t, strings.Split(err.Error(), "\n"), tt.lines, "one line per mistake: %v", err)
			}
		})
	}
}
