package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Annotations of an OCI layout's index.json naming an entry.
const (
	// refNameAnnotation is the OCI name: a tag, or a full name.
	refNameAnnotation = "org.opencontainers.image.ref.name"
	// containerdNameAnnotation is the full name containerd and BuildKit
	// write beside a ref.name that is only a tag.
	containerdNameAnnotation = "io.containerd.image.name"
)

// ErrNoRepository is the error of an OCI layout entry named only by a tag
// when no repository was given to make it a full name.
var ErrNoRepository = errors.New("is named only by a tag, and no repository was given")

// namedImage is an image or image index of an archive, and its name.
type namedImage struct {
	ref name.Reference
	img v1.Image
	idx v1.ImageIndex
}

// Load pushes every image of the OCI layout directory or `docker save`
// archive at path into the environment's registry at host (its address on
// the host machine), each under its name: a docker save archive's RepoTags;
// an OCI layout entry's org.opencontainers.image.ref.name, where a name that
// is only a tag is a tag of repository (else of the entry's
// io.containerd.image.name). It returns their names. An image without a
// name is an error, and then nothing is pushed.
func Load(ctx context.Context, host, path, repository string) ([]name.Reference, error) {
	images, err := readArchive(path, repository)
	if err != nil {
		return nil, err
	}
	for _, im := range images {
		if im.ref.Context().RegistryStr() == PrivateHost {
			return nil, fmt.Errorf("image %s of %s is named in the private registry %s, which needs credentials: give it another name", im.ref, path, PrivateHost)
		}
	}
	refs := make([]name.Reference, 0, len(images))
	for _, im := range images {
		dst, err := storedRef(host, im.ref)
		if err != nil {
			return nil, err
		}
		if im.idx != nil {
			err = remote.WriteIndex(dst, im.idx, remote.WithContext(ctx))
		} else {
			err = remote.Write(dst, im.img, remote.WithContext(ctx))
		}
		if err != nil {
			return nil, fmt.Errorf("push %s from %s: %w", im.ref, path, err)
		}
		refs = append(refs, im.ref)
	}
	return refs, nil
}

// readArchive reads the named images of the OCI layout directory or
// docker save archive at path.
func readArchive(path, repository string) ([]namedImage, error) {
	if repository != "" {
		if _, err := name.NewRepository(repository); err != nil {
			return nil, fmt.Errorf("repository %q: %w", repository, err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read images: %w", err)
	}
	if fi.IsDir() {
		return readLayout(path, repository)
	}
	return readTarball(path)
}

// readLayout reads the named images and image indexes of the OCI layout in
// dir.
func readLayout(dir, repository string) ([]namedImage, error) {
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return nil, fmt.Errorf("%s is not an OCI layout (no index.json): %w", dir, err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("open OCI layout %s: %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("read %s/index.json: %w", dir, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read %s/index.json: %w", dir, err)
	}
	var images []namedImage
	for _, d := range m.Manifests {
		if !d.MediaType.IsIndex() && !d.MediaType.IsImage() {
			continue
		}
		refName := d.Annotations[refNameAnnotation]
		if refName == "" {
			return nil, fmt.Errorf("image %s of the OCI layout %s has no name (annotation %s)", d.Digest, dir, refNameAnnotation)
		}
		if !strings.ContainsAny(refName, "/:") {
			switch {
			case repository != "":
				refName = repository + ":" + refName
			case d.Annotations[containerdNameAnnotation] != "":
				refName = d.Annotations[containerdNameAnnotation]
			default:
				return nil, fmt.Errorf("image %s of the OCI layout %s, %q, %w", d.Digest, dir, refName, ErrNoRepository)
			}
		}
		ref, err := name.ParseReference(refName)
		if err != nil {
			return nil, fmt.Errorf("image name %q in %s: %w", refName, dir, err)
		}
		im := namedImage{ref: ref}
		if d.MediaType.IsIndex() {
			im.idx, err = top.ImageIndex(d.Digest)
		} else {
			im.img, err = top.Image(d.Digest)
		}
		if err != nil {
			return nil, fmt.Errorf("image %s in %s: %w", ref, dir, err)
		}
		images = append(images, im)
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("the OCI layout %s holds no image", dir)
	}
	return images, nil
}

// readTarball reads the images of the docker save archive at path, one per
// name in its RepoTags.
func readTarball(path string) ([]namedImage, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(path) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		return nil, fmt.Errorf("%s is neither an OCI layout directory nor a docker save archive: %w", path, err)
	}
	var images []namedImage
	for i, d := range m {
		if len(d.RepoTags) == 0 {
			return nil, fmt.Errorf("image %d of %s (config %s) has no name: save it by name (docker save NAME:TAG)", i+1, path, d.Config)
		}
		for _, t := range d.RepoTags {
			tag, err := name.NewTag(t)
			if err != nil {
				return nil, fmt.Errorf("image name %q in %s: %w", t, path, err)
			}
			img, err := tarball.Image(opener, &tag)
			if err != nil {
				return nil, fmt.Errorf("image %s in %s: %w", t, path, err)
			}
			images = append(images, namedImage{ref: tag, img: img})
		}
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("the docker save archive %s holds no image", path)
	}
	return images, nil
}
