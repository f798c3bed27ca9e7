package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// layoutDir is the OCI image layout under the output directory.
const layoutDir = "layout"

// tarballName is the file name of the docker-compatible archive of the image
// of one platform, for `kind load image-archive` and `docker load`.
func tarballName(tag string, p v1.Platform) string {
	return fmt.Sprintf("ocm-controller-%s-%s-%s.tar", tag, p.OS, p.Architecture)
}

// writeLayout writes idx as the only image of a new OCI image layout in dir,
// named tag (annotation org.opencontainers.image.ref.name), replacing what
// dir held.
func writeLayout(dir string, idx v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the previous layout %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("create OCI layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{annotationRefName: tag})); err != nil {
		return fmt.Errorf("write the image index to %s: %w", dir, err)
	}
	return nil
}

// readLayout returns the image index of the OCI layout in dir, as
// writeLayout wrote it.
func readLayout(dir string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("open OCI layout %s (run make image first): %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("read %s/index.json: %w", dir, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read %s/index.json: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s/index.json lists %d images, want the one image index make image writes", dir, len(m.Manifests))
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("read image index %s from %s: %w", m.Manifests[0].Digest, dir, err)
	}
	return idx, nil
}

// writeTarball writes img, tagged ref, as a docker-compatible archive.
func writeTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("make %s: %w", filepath.Dir(path), err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// errNoRegistry is returned by push without a registry.
var errNoRegistry = errors.New("no registry to push to: set REGISTRY (make image-push REGISTRY=quay.io/<org>), the image is pushed as <REGISTRY>/ocm-controller:<version>")

// push pushes the image index of the OCI layout in dir as ref, with the
// credentials of the docker config (docker login, credential helpers), and
// returns its digest.
func push(ctx context.Context, dir, ref string, opts ...remote.Option) (v1.Hash, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	idx, err := readLayout(dir)
	if err != nil {
		return v1.Hash{}, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(tag, idx, opts...); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", tag, err)
	}
	return idx.Digest()
}
