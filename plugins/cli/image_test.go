package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

func TestResolveImage(t *testing.T) {
	tag := version.ImageTag(version.Version)
	tests := []struct {
		name, image, registry string
		want, wantErr         string
	}{
		{name: "default registry", registry: config.DefaultImageRegistry, want: "quay.io/kubectl-ocm/ocm-controller:" + tag},
		{name: "mirror", registry: "registry.example.com:5000/mirror/ocm", want: "registry.example.com:5000/mirror/ocm/ocm-controller:" + tag},
		{name: "trailing slash", registry: "localhost:5000/", want: "localhost:5000/ocm-controller:" + tag},
		{name: "image wins", image: "example.com/ocm-controller:v1", registry: "ignored.example.com", want: "example.com/ocm-controller:v1"},
		{name: "short image", image: "ocm-controller:dev", registry: config.DefaultImageRegistry, want: "ocm-controller:dev"},
		{name: "image by digest", image: "example.com/ocm-controller@sha256:" + strings.Repeat("a", 64), want: "example.com/ocm-controller@sha256:" + strings.Repeat("a", 64)},
		{name: "invalid image", image: "Example.com/OCM:v1", wantErr: `--image "Example.com/OCM:v1" is not a valid image reference`},
		{name: "registry with tag", registry: "quay.io/org:v1", wantErr: `--image-registry "quay.io/org:v1" does not make a valid image reference`},
		{name: "registry with upper case", registry: "quay.io/MyOrg", wantErr: "--image-registry"},
		{name: "no registry", wantErr: "--image-registry is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveImage(tt.image, tt.registry)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolveImage(%q, %q) = %q, %v; want %q", tt.image, tt.registry, got, err, tt.want)
			}
		})
	}
}
