package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/registry"
)

// PrivateRegistry is the environment's registry that requires credentials,
// as a company's registry does: the nodes pull from it directly, by Host,
// and only with its user name and password (a Pod's imagePullSecrets).
// Each environment has credentials of its own.
type PrivateRegistry struct {
	// Host is the registry as the nodes name it, localhost:5001: images in
	// it are Host/<repository>:<tag>.
	Host string
	// Address is where it listens on the host machine, 127.0.0.1:<port>.
	Address string
	// Username and Password are the credentials it requires.
	Username, Password string
}

// DockerConfigJSON returns a docker config.json with p's credentials for
// p.Host: the .dockerconfigjson of a Secret of type
// kubernetes.io/dockerconfigjson that lets a Pod pull from it.
func (p PrivateRegistry) DockerConfigJSON() []byte {
	return registry.Credentials{Username: p.Username, Password: p.Password}.DockerConfigJSON()
}

// PrivateRegistry returns the environment's private registry, nil without
// nodes. TagImage stores images in it.
func (e *Environment) PrivateRegistry() *PrivateRegistry {
	if e.private == nil {
		return nil
	}
	creds := e.private.Credentials()
	return &PrivateRegistry{Host: registry.PrivateHost, Address: e.private.Host(), Username: creds.Username, Password: creds.Password}
}

// copyPrivateImages stores the images of the environment's registry in
// repositories into the private registry, under the names PrivateRegistry's
// Name gives them.
func (e *Environment) copyPrivateImages(ctx context.Context, repositories []string) error {
	if len(repositories) == 0 {
		return nil
	}
	p := e.PrivateRegistry()
	wanted := map[string]bool{}
	for _, r := range repositories {
		repo, err := name.NewRepository(r)
		if err != nil {
			return err
		}
		wanted[repo.Name()] = true
	}
	var copied []string
	for _, image := range e.images {
		ref, err := name.ParseReference(image)
		if err != nil || !wanted[ref.Context().Name()] {
			continue
		}
		dst, err := p.Name(image)
		if err != nil {
			return err
		}
		if err := e.TagImage(ctx, image, dst); err != nil {
			return err
		}
		copied = append(copied, dst)
	}
	if len(copied) == 0 {
		return fmt.Errorf("no image of %v in the environment's registry to store in the private registry", repositories)
	}
	e.logf("private registry %s (%s): %v", p.Host, p.Address, copied)
	return nil
}

// PrivateRegistryHost is the private registry as the nodes name it.
const PrivateRegistryHost = registry.PrivateHost

// registryStateFile, in an environment's directory, tells other processes
// (dev-env load) where its registry is and where its nodes' runtimes read
// the registries' configuration.
const registryStateFile = "registry.json"

// registryState is the content of registryStateFile.
type registryState struct {
	// Address is the environment's registry on the host machine.
	Address string `json:"address"`
	// HostsDirs are the nodes' containerd registry configuration
	// directories, holding <registry host>/hosts.toml.
	HostsDirs []string `json:"hostsDirs"`
}

// registryState returns where the environment's registry and its nodes'
// registry configuration are.
func (e *Environment) registryState() registryState {
	s := registryState{Address: e.registry.Host()}
	for _, c := range e.clusters {
		s.HostsDirs = append(s.HostsDirs, c.node.path("certs.d"))
	}
	return s
}

// writeRegistryState writes registryStateFile into the environment's
// directory.
func (e *Environment) writeRegistryState() error {
	b, err := json.Marshal(e.registryState())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.dir, registryStateFile), b, 0o644)
}

// mirror has every node's runtime fetch the images of registry host from
// the environment's registry. The runtime reads the hosts' configuration
// on every pull.
func (s registryState) mirror(host string) error {
	for _, dir := range s.HostsDirs {
		if err := writeHostsTOML(dir, host, registry.HostsTOML(host)); err != nil {
			return err
		}
	}
	return nil
}

// writeHostsTOML writes containerd's hosts.toml for registry host into the
// registry configuration directory dir, replacing it at once: the runtime
// reads it on every pull.
func writeHostsTOML(dir, host, toml string) error {
	path := filepath.Join(dir, host, "hosts.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(toml), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ErrNoRepository is the error of LoadImage for an OCI layout entry named
// only by a tag when no repository was given.
var ErrNoRepository = registry.ErrNoRepository

// LoadImage loads the images of the OCI layout directory or `docker save`
// archive at path into the environment's registry, as `kind load` does, and
// returns their names: every node can then pull them by those names. The
// images keep the names the archive gives them: a docker save archive's
// RepoTags, an OCI layout entry's org.opencontainers.image.ref.name; a
// layout entry named only by a tag is a tag of repository (else of its
// io.containerd.image.name annotation). An image without a name is an
// error, and then nothing is loaded.
func (e *Environment) LoadImage(ctx context.Context, path, repository string) ([]string, error) {
	if e.registry == nil {
		return nil, errors.New("the environment has no nodes, and no registry")
	}
	return e.registryState().load(ctx, path, repository)
}

// LoadImageInto is LoadImage for the running environment whose directory
// is dir, from another process: the environment wrote where its registry
// is into dir when it started.
func LoadImageInto(ctx context.Context, dir, path, repository string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, registryStateFile))
	if err != nil {
		return nil, fmt.Errorf("no registry of an environment with nodes in %s (an environment started by an older framework has none: restart it): %w", dir, err)
	}
	var s registryState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, registryStateFile), err)
	}
	return s.load(ctx, path, repository)
}

// load loads the images at path into the registry of s and has the nodes
// fetch their registries from it.
func (s registryState) load(ctx context.Context, path, repository string) ([]string, error) {
	refs, err := registry.Load(ctx, s.Address, path, repository)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(refs))
	for _, ref := range refs {
		if err := s.mirror(registry.HostOf(ref)); err != nil {
			return nil, err
		}
		names = append(names, ref.Name())
	}
	return names, nil
}

// Name returns the name of image (a full name, as Images lists them) in
// the private registry: the same repository path and tag or digest in
// p.Host, as quay.io/kubectl-ocm/ocm-controller:v1 becomes
// localhost:5001/kubectl-ocm/ocm-controller:v1.
func (p PrivateRegistry) Name(image string) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", err
	}
	sep := ":"
	if _, ok := ref.(name.Digest); ok {
		sep = "@"
	}
	return p.Host + "/" + ref.Context().RepositoryStr() + sep + ref.Identifier(), nil
}
