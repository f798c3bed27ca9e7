package join

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

// runJoin runs `kubectl ocm join` with the flags of a valid join, each
// replaced by the one of the same name in change (dropped when its value is
// empty), and then the flags of extra. The cluster of --context is nowhere,
// so the command fails at the latest when it reaches for a cluster.
func runJoin(t *testing.T, change map[string]string, extra ...string) error {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := filepath.Join(t.TempDir(), "no-kubeconfig")
	flags.KubeConfig = &nowhere
	valid := map[string]string{"hub-token": "token", "hub-apiserver": "https://hub.example.com:6443", "ca-cert-hash": testPin, "cluster-name": "cluster1"}
	var args []string
	for _, name := range []string{"hub-token", "hub-apiserver", "ca-cert-hash", "cluster-name"} {
		value, changed := change[name]
		if !changed {
			value = valid[name]
		}
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	cmd := NewCmdJoin(flags, genericiooptions.NewTestIOStreamsDiscard())
	cmd.SetArgs(append(args, extra...))
	return cmd.ExecuteContext(context.Background())
}

// TestFlagMistakes checks what join says about bad flags, before it sends
// any request: each mistake on a line of its own, every mistake at once.
func TestFlagMistakes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name   string
		change map[string]string
		extra  []string
		// want are the lines of the error, in any order.
		want []string
	}{
		{name: "no token", change: map[string]string{"hub-token": ""},
			want: []string{"--hub-token is required: run `kubectl ocm hub token` on the hub to get one"}},
		{name: "http hub", change: map[string]string{"hub-apiserver": "http://hub:6443"},
			want: []string{`--hub-apiserver "http://hub:6443" is not an https URL such as https://hub.example.com:6443`}},
		{name: "bad pin", change: map[string]string{"ca-cert-hash": "0123"},
			want: []string{`--ca-cert-hash: "0123" is not a CA pin`}},
		{name: "bad image", extra: []string{"--image", "example.com/OCM:v1"},
			want: []string{`--image "example.com/OCM:v1" is not a valid image reference (such as quay.io/org/ocm-controller:v0.1.0)`}},
		{name: "bad image registry", extra: []string{"--image-registry", "quay.io/org:v1"},
			want: []string{`--image-registry "quay.io/org:v1" does not make a valid image reference`}},
		{name: "bad TLS version", extra: []string{"--tls-min-version", "1.3"},
			want: []string{`--tls-min-version: "1.3" is not a TLS version`}},
		{name: "no pull credentials", extra: []string{"--image-pull-credentials", missing},
			want: []string{"--image-pull-credentials: cannot read " + missing}},
		{name: "socks proxy", extra: []string{"--proxy-url", "socks5://proxy:1080"},
			want: []string{`--proxy-url "socks5://proxy:1080": the agent reaches the hub through an HTTP or HTTPS proxy; use an http:// or https:// URL`}},
		{name: "proxy CA with a bad proxy", extra: []string{"--proxy-url", "proxy:3128", "--proxy-ca-file", missing},
			want: []string{"read --proxy-ca-file"}},
		{name: "no CA file", change: map[string]string{"ca-cert-hash": ""}, extra: []string{"--ca-file", missing},
			want: []string{"read --ca-file"}},
		{name: "every mistake at once",
			change: map[string]string{"hub-token": "", "hub-apiserver": "http://hub:6443", "ca-cert-hash": "0123"},
			extra: []string{"--image", "example.com/OCM:v1", "--tls-min-version", "1.3", "--image-pull-credentials", missing,
				"--proxy-url", "socks5://proxy:1080", "--mode", "x", "--dry-run=true", "--timeout", "-1s"},
			want: []string{
				"--hub-token is required",
				`--hub-apiserver "http://hub:6443" is not an https URL`,
				`--ca-cert-hash: "0123" is not a CA pin`,
				`--image "example.com/OCM:v1" is not a valid image reference`,
				`--tls-min-version: "1.3" is not a TLS version`,
				"--image-pull-credentials: cannot read " + missing,
				`--proxy-url "socks5://proxy:1080"`,
				`--mode "x" is not one of default, hosted`,
				"use none, client or server",
				"--timeout -1s must be positive",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runJoin(t, tt.change, tt.extra...)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.ErrorContains(t, err, want)
			}
			assert.Len(t, strings.Split(err.Error(), "\n"), len(tt.want), "one line per mistake: %v", err)
		})
	}
}
