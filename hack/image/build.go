package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// controllerPackage is the main package of ocm-controller.
const controllerPackage = "./controllers/cmd/ocm-controller"

// OCI annotation and label keys the image carries.
const (
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelSource   = "org.opencontainers.image.source"
	labelLicenses = "org.opencontainers.image.licenses"
	labelTitle    = "org.opencontainers.image.title"
	labelCreated  = "org.opencontainers.image.created"
	// annotationRefName names an image in an OCI layout's index.json.
	annotationRefName = "org.opencontainers.image.ref.name"
)

// buildConfig describes the image to build.
type buildConfig struct {
	// ModuleDir is the root of the kubectl-ocm module, where go build runs.
	ModuleDir string
	// Platforms are the linux platforms of the image, such as linux/amd64.
	Platforms []v1.Platform
	// LDFlags are the linker flags of the binaries (version stamping).
	LDFlags string
	// Version is the version the binaries are stamped with; the image's
	// tag is version.ImageTag of it.
	Version string
	// Revision is the commit the binaries are built from.
	Revision string
	// Source is the URL of the source repository.
	Source string
	// Licenses is the SPDX expression of the license.
	Licenses string
	// Created is the image's creation time and every layer entry's
	// modification time (SOURCE_DATE_EPOCH).
	Created time.Time
}

// parsePlatforms parses a comma-separated list of os/arch platforms.
func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", f, err)
		}
		if p.OS != "linux" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q is not linux/<arch>: the image runs on Linux nodes", f)
		}
		out = append(out, *p)
	}
	return out, nil
}

// buildBinary cross-builds ocm-controller for p into dir and returns its
// path: a static binary (CGO_ENABLED=0), -trimpath, stamped with
// cfg.LDFlags.
func buildBinary(ctx context.Context, cfg buildConfig, p v1.Platform, dir string) (string, error) {
	out := filepath.Join(dir, p.OS+"_"+p.Architecture, "ocm-controller")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", cfg.LDFlags, "-o", out, controllerPackage)
	cmd.Dir = cfg.ModuleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Variant != "" && p.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ocm-controller for %s: %w\n%s", p, err, msg)
	}
	return out, nil
}

// controllerImage returns the image of one platform: an empty base with the
// layer of binary, run as the non-root user, with the OCI labels of cfg.
func controllerImage(cfg buildConfig, p v1.Platform, binary []byte) (v1.Image, error) {
	layer, err := controllerLayer(binary, cfg.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: cfg.Created.UTC()}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "hack/image: " + entrypoint + ", /etc/passwd, /etc/group"},
	})
	if err != nil {
		return nil, fmt.Errorf("append the controller layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Entrypoint = []string{entrypoint}
	cf.Config.User = fmt.Sprintf("%d:%d", nonrootUID, nonrootUID)
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = cfg.labels()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set image config: %w", err)
	}
	return img, nil
}

// labels are the OCI labels of the image and annotations of the index.
func (cfg buildConfig) labels() map[string]string {
	return map[string]string{
		labelTitle:    "ocm-controller",
		labelVersion:  cfg.Version,
		labelRevision: cfg.Revision,
		labelSource:   cfg.Source,
		labelLicenses: cfg.Licenses,
		labelCreated:  cfg.Created.UTC().Format(time.RFC3339),
	}
}

// controllerIndex returns the multi-platform index of images, one per
// platform of cfg, in that order.
func controllerIndex(cfg buildConfig, images []v1.Image) v1.ImageIndex {
	adds := make([]mutate.IndexAddendum, len(images))
	for i, img := range images {
		p := cfg.Platforms[i]
		adds[i] = mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}}
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return mutate.Annotations(idx, cfg.labels()).(v1.ImageIndex)
}

// buildImages builds the binaries of every platform of cfg in a temporary
// directory and returns the image of each, in the order of cfg.Platforms.
func buildImages(ctx context.Context, cfg buildConfig) ([]v1.Image, error) {
	dir, err := os.MkdirTemp("", "ocm-controller-image-")
	if err != nil {
		return nil, fmt.Errorf("make build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var images []v1.Image
	for _, p := range cfg.Platforms {
		bin, err := buildBinary(ctx, cfg, p, dir)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("read the %s binary: %w", p, err)
		}
		img, err := controllerImage(cfg, p, data)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		images = append(images, img)
	}
	return images, nil
}
