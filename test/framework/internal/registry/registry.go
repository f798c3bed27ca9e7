// Package registry is the image registry of a test environment with nodes:
// it serves the images of OCI layouts and docker save archives on the host's
// loopback and on the loopback of every node, where the node's container
// runtime pulls them, so that no image is fetched from outside the machine.
// A second, private registry beside it requires credentials, as a
// company's registry does.
package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sys/unix"
)

// Port is where the registry listens on each node's loopback.
const Port = 5000

// Server is one of the environment's image registries: one handler, served
// on the host's loopback (where the framework and a user push) and on the
// loopback of every node, where the node's container runtime pulls from it.
//
// In the environment's registry (Start), an image named
// <registry>/<repository>:<tag> is stored as repository
// <registry>/<repository>, so docker.io/library/busybox and
// quay.io/kubectl-ocm/x never meet. The private registry (StartPrivate) is
// one registry, PrivateHost, and stores its repositories as named.
type Server struct {
	handler http.Handler
	host    string // 127.0.0.1:<port> on the host
	// nodePort is where it listens on each node's loopback.
	nodePort int
	// creds are what the private registry requires, nil for the
	// environment's registry.
	creds   *Credentials
	mu      sync.Mutex
	servers []*http.Server
}

// Start starts the environment's registry with its blobs under dir,
// serving on the host's loopback.
func Start(dir string) (*Server, error) {
	return start(dir, Port, nil)
}

// start starts a registry with its blobs under dir, serving on the host's
// loopback; with creds, every request must carry them.
func start(dir string, nodePort int, creds *Credentials) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &Server{nodePort: nodePort, creds: creds, handler: ggcrregistry.New(
		ggcrregistry.WithBlobHandler(ggcrregistry.NewDiskBlobHandler(dir)),
		ggcrregistry.Logger(log.New(io.Discard, "", 0)),
	)}
	if creds != nil {
		r.handler = requireBasicAuth(*creds, r.handler)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.host = l.Addr().String()
	r.serve(l)
	return r, nil
}

func (r *Server) serve(l net.Listener) {
	srv := &http.Server{Handler: r.handler, ReadHeaderTimeout: 30 * time.Second}
	r.mu.Lock()
	r.servers = append(r.servers, srv)
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// ServeInNetns serves the registry on 127.0.0.1:Port (the private
// registry on 127.0.0.1:PrivatePort) inside the network namespace ns: a
// socket stays in the namespace it was made in, so the listener is made
// from a thread switched into ns.
func (r *Server) ServeInNetns(ns string) error {
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is never unlocked: if switching back fails it must
		// not run other goroutines, and the runtime ends a thread whose
		// goroutine exits locked.
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("enter network namespace %s: %w", ns, err)}
			return
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", r.nodePort))
		if serr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); serr != nil {
			if l != nil {
				_ = l.Close()
			}
			ch <- result{err: errors.Join(err, serr)}
			return
		}
		ch <- result{l: l, err: err}
		runtime.UnlockOSThread()
	}()
	res := <-ch
	if res.err != nil {
		return fmt.Errorf("serve the registry in network namespace %s: %w", ns, res.err)
	}
	r.serve(res.l)
	return nil
}

// PushLayout pushes every image and image index of the OCI layout in dir
// under its name (annotation org.opencontainers.image.ref.name), and
// returns their names. A name that is only a tag, as `make image` writes,
// is a tag of repository.
func (r *Server) PushLayout(ctx context.Context, dir, repository string) ([]string, error) {
	refs, err := Load(ctx, r.host, dir, repository)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = ref.Name()
	}
	return names, nil
}

// Host returns the registry's address on the host, 127.0.0.1:<port>.
func (r *Server) Host() string { return r.host }

// localRef is where image ref is stored in the registry.
func (r *Server) localRef(ref name.Reference) (name.Reference, error) {
	if r.creds == nil {
		return storedRef(r.host, ref)
	}
	if h := ref.Context().RegistryStr(); h != PrivateHost {
		return nil, fmt.Errorf("image %s is not in the private registry %s", ref, PrivateHost)
	}
	return withRepository(r.host+"/"+ref.Context().RepositoryStr(), ref)
}

// storedRef is where image ref is stored in the environment's registry at
// host (its address on the host): under the name of its registry.
func storedRef(host string, ref name.Reference) (name.Reference, error) {
	return withRepository(fmt.Sprintf("%s/%s/%s", host, HostOf(ref), ref.Context().RepositoryStr()), ref)
}

// withRepository returns ref's tag or digest in repository repo.
func withRepository(repo string, ref name.Reference) (name.Reference, error) {
	if t, ok := ref.(name.Tag); ok {
		return name.NewTag(repo+":"+t.TagStr(), name.Insecure)
	}
	return name.NewDigest(repo+"@"+ref.Identifier(), name.Insecure)
}

// remoteOptions are the options of a request to the registry: with ctx,
// and with the private registry's credentials.
func (r *Server) remoteOptions(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx)}
	if r.creds != nil {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: r.creds.Username, Password: r.creds.Password}))
	}
	return opts
}

// HostsTOML is the containerd hosts.toml for registry host: fetch from the
// registry on the node's loopback, under the path where the registry keeps
// that host's images. Its server, which the runtime falls back to, is that
// registry too: nothing is fetched from outside the machine.
func HostsTOML(host string) string {
	server := fmt.Sprintf("http://127.0.0.1:%d", Port)
	mirror := fmt.Sprintf("%s/v2/%s", server, host)
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  override_path = true\n", server, mirror)
}

// Stop closes every listener of the registry.
func (r *Server) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.servers {
		_ = s.Close()
	}
	r.servers = nil
}

// CopyImage stores image src again as dst (both full names, such as
// quay.io/kubectl-ocm/ocm-controller:v1): an image or image index, unchanged.
func (r *Server) CopyImage(ctx context.Context, src, dst string) error {
	return r.CopyImageTo(ctx, src, r, dst)
}

// CopyImageTo stores image src of registry r as dst in registry to (both
// full names; in the private registry, names in PrivateHost): an image or
// image index, unchanged.
func (r *Server) CopyImageTo(ctx context.Context, src string, to *Server, dst string) error {
	s, err := name.ParseReference(src)
	if err != nil {
		return err
	}
	d, err := name.ParseReference(dst)
	if err != nil {
		return err
	}
	from, err := r.localRef(s)
	if err != nil {
		return err
	}
	target, err := to.localRef(d)
	if err != nil {
		return err
	}
	desc, err := remote.Get(from, r.remoteOptions(ctx)...)
	if err != nil {
		return fmt.Errorf("image %s is not in the environment's registry: %w", src, err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return err
		}
		return remote.WriteIndex(target, idx, to.remoteOptions(ctx)...)
	}
	img, err := desc.Image()
	if err != nil {
		return err
	}
	return remote.Write(target, img, to.remoteOptions(ctx)...)
}

// HostOf is how the container runtime names the registry of image
// ref: docker.io for Docker Hub.
func HostOf(ref name.Reference) string {
	if h := ref.Context().RegistryStr(); h != name.DefaultRegistry {
		return h
	}
	return "docker.io"
}
