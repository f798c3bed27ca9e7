package cli

import (
	"fmt"

	"github.com/distribution/reference"
	"github.com/spf13/pflag"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// AddImageFlags registers --image and --image-registry, which choose the
// ocm-controller image of what the verb deploys (what names it, such as "the
// agent"): --image names the image whole; otherwise it is the image of this
// build's version in --image-registry. ResolveImage turns the two into the
// image.
func AddImageFlags(fs *pflag.FlagSet, image, registry *string, what string) {
	fs.StringVar(image, "image", *image, fmt.Sprintf(
		"The ocm-controller image of %s, instead of this version's in --image-registry (%s).",
		what, config.DefaultImage()))
	fs.StringVar(registry, "image-registry", *registry,
		"The registry and organization the ocm-controller image is pulled from, such as a mirror: the image is <image-registry>/"+config.ControllerImageName+":<version>.")
}

// ResolveImage returns the ocm-controller image a verb deploys: image when it
// is set, else the image of this build's version in registry
// (config.ControllerImage). The result must be a valid image reference; the
// error names the flag it came from and what is wrong.
func ResolveImage(image, registry string) (string, error) {
	return ResolveVersionImage(image, registry, version.Version)
}

// ResolveVersionImage is ResolveImage for the image of version ver, rather
// than this build's, in registry.
func ResolveVersionImage(image, registry, ver string) (string, error) {
	if image != "" {
		if _, err := reference.ParseNormalizedNamed(image); err != nil {
			return "", fmt.Errorf("--image %q is not a valid image reference (such as quay.io/org/ocm-controller:v0.1.0): %w", image, err)
		}
		return image, nil
	}
	if registry == "" {
		return "", fmt.Errorf("--image-registry is empty: give a registry such as %s, or the whole image with --image", config.DefaultImageRegistry)
	}
	image = config.ControllerImage(registry, ver)
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return "", fmt.Errorf("--image-registry %q does not make a valid image reference %q: give a registry and organization such as %s, without tag: %w",
			registry, image, config.DefaultImageRegistry, err)
	}
	return image, nil
}
