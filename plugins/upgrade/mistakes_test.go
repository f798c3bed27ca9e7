package upgrade

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestFlagMistakes checks what `upgrade hub` and `upgrade klusterlet` say
// about bad flags, before they send any request: the cluster of the
// kubeconfig does not exist. Each mistake is on a line of its own, every
// mistake at once.
func TestFlagMistakes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		args []string
		// want are the lines of the error, in any order.
		want []string
	}{
		{name: "bad image", args: []string{"--image", "example.com/OCM:v1"},
			want: []string{`--image "example.com/OCM:v1" is not a valid image reference (such as quay.io/org/ocm-controller:v0.1.0)`}},
		{name: "bad image registry", args: []string{"--image-registry", "quay.io/org:v1"},
			want: []string{`--image-registry "quay.io/org:v1" does not make a valid image reference`}},
		{name: "no pull credentials", args: []string{"--image-pull-credentials", missing},
			want: []string{"--image-pull-credentials: cannot read " + missing}},
		{name: "image and bundle version", args: []string{"--image", "example.com/ocm-controller:v1", "--bundle-version", "v0.2.0"},
			want: []string{"--image and --bundle-version both choose the image: give one of them"}},
		{name: "every mistake at once", args: []string{"--image-registry", "quay.io/org:v1", "--image-pull-credentials", missing, "-o", "wide", "--dry-run=true"},
			want: []string{
				`--image-registry "quay.io/org:v1" does not make a valid image reference`,
				"--image-pull-credentials: cannot read " + missing,
				`--output "wide" is not supported`,
				"use none, client or server",
			}},
	}
	for _, target := range []string{TargetHub, TargetKlusterlet} {
		for _, tt := range tests {
			t.Run(target+"/"+tt.name, func(t *testing.T) {
				flags := genericclioptions.NewConfigFlags(false)
				nowhere := filepath.Join(t.TempDir(), "no-kubeconfig")
				flags.KubeConfig = &nowhere
				cmd := NewCmdUpgrade(flags, genericiooptions.NewTestIOStreamsDiscard())
				cmd.SetArgs(append([]string{target}, tt.args...))
				err := cmd.ExecuteContext(context.Background())
				require.Error(t, err)
				for _, want := range tt.want {
					assert.ErrorContains(t, err, want)
				}
				assert.Len(t, strings.Split(err.Error(), "\n"), len(tt.want), "one line per mistake: %v", err)
			})
		}
	}
}
