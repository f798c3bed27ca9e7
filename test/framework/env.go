package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/registry"
)

// Options configure an Environment.
type Options struct {
	// Clusters names the clusters to start, in order; the first one is the
	// current context of the kubeconfig. Default: "hub".
	Clusters []string
	// Dir holds certificates, etcd data, logs and the kubeconfig. Default: a new
	// temporary directory that Stop removes.
	Dir string
	// BinDir holds kube-apiserver, kube-controller-manager and etcd. Default:
	// $KUBE_BIN_DIR, else bin/kube under the repository root.
	BinDir string
	// Log receives one line per startup step. Default: discarded.
	Log io.Writer
	// StartTimeout bounds the whole startup. Default: 3 minutes.
	StartTimeout time.Duration
	// ClusterSigningDuration is the longest lifetime of the certificates the
	// clusters' controller managers sign for CertificateSigningRequests
	// (kube-controller-manager --cluster-signing-duration), also for
	// requests that ask for less than the API's 600-second minimum of
	// spec.expirationSeconds. Default: kube-controller-manager's, one year.
	ClusterSigningDuration time.Duration
	// Nodes gives every cluster a node (see node.go): Pods run. The API
	// servers then listen on the environment's bridge, not on loopback.
	// The machine must be able to run them (root, namespaces, cgroups);
	// Start says what is missing.
	Nodes bool
	// Images are the OCI image layouts whose images the environment's
	// registry serves to the nodes (with Nodes).
	Images []ImageLayout
	// PrivateImages names repositories (such as
	// quay.io/kubectl-ocm/ocm-controller) whose images of Images are also
	// stored in the private registry (with Nodes), under the names
	// PrivateRegistry().Name gives them
	// (localhost:5001/kubectl-ocm/ocm-controller:<tag>).
	PrivateImages []string
	// Previous names the clusters that run the previous Kubernetes release
	// (kube-apiserver, kube-controller-manager and, with Nodes, the
	// kubelet, kube-proxy and kube-scheduler from BinDir/previous, which
	// EnsurePrevious builds from test/kube/previous); the others run the
	// current one. etcd and the container runtime are shared.
	Previous []string
	// NoClientSigning names the clusters whose controller manager signs no
	// certificates, as on managed offerings such as Amazon EKS: no
	// --cluster-signing-* flags and the CSR signing controller off, so an
	// approved CertificateSigningRequest never gets a certificate.
	NoClientSigning []string
	// PriorityAndFairness names the clusters whose API server runs API
	// Priority and Fairness, as every production API server does (its
	// default); the others run without it, which costs less CPU for tests.
	PriorityAndFairness []string
	// Profiling names the clusters whose API server serves /debug/pprof
	// (kube-apiserver --profiling, its default), for benchmarks to profile
	// the API server; the others run without it.
	Profiling []string
}

// PreviousDir is the subdirectory of the Kubernetes binaries' directory
// holding the previous release's.
const PreviousDir = "previous"

// previousBinaries are the binaries of a cluster and its node that
// PreviousDir holds.
var previousBinaries = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"}

// ImageLayout is an OCI image layout whose images the nodes can run, each
// under the name its org.opencontainers.image.ref.name annotation gives; a
// name that is only a tag is a tag of Repository.
type ImageLayout struct {
	Dir        string
	Repository string
}

// Environment is a set of running clusters sharing one etcd.
type Environment struct {
	dir        string
	ownDir     bool
	kubeconfig string
	binDir     string
	log        io.Writer
	// signingDuration is Options.ClusterSigningDuration.
	signingDuration time.Duration
	etcd            *process.Process
	etcdURL         string
	etcdArgs        []string
	clusters        []*Cluster
	// slot, registry and private exist with nodes.
	slot     *host.Slot
	registry *registry.Server
	// private is the registry that requires credentials.
	private  *registry.Server
	images   []string
	stopOnce sync.Once
	stopErr  error
}

// clusterNameRE is what a cluster name must look like: a DNS label, since it
// becomes an etcd prefix, a directory and a kubeconfig context.
var clusterNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Start starts etcd and every cluster in opts and waits until each API server
// is ready and each controller manager healthy. On error everything started so
// far is stopped.
func Start(ctx context.Context, opts Options) (_ *Environment, err error) {
	binDir, err := opts.complete()
	if err != nil {
		return nil, err
	}
	e, err := newEnvironment(opts, binDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	start := time.Now()
	if opts.Nodes {
		if err := e.prepareNodes(ctx, opts.Images, opts.PrivateImages); err != nil {
			return nil, err
		}
	}
	if err := e.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := e.startClusters(ctx); err != nil {
		return nil, err
	}
	if err := e.writeKubeconfig(); err != nil {
		return nil, err
	}
	e.logf("environment ready in %s: %d cluster(s), kubeconfig %s", time.Since(start).Round(100*time.Millisecond), len(e.clusters), e.kubeconfig)
	return e, nil
}

// complete fills in the defaults of o and checks it, and returns the
// directory of the Kubernetes binaries.
func (o *Options) complete() (binDir string, err error) {
	if len(o.Clusters) == 0 {
		o.Clusters = []string{"hub"}
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if err := o.checkClusterNames(); err != nil {
		return "", err
	}
	if binDir, err = resolveBinDir(o.BinDir); err != nil {
		return "", err
	}
	if o.ClusterSigningDuration < 0 {
		return "", fmt.Errorf("ClusterSigningDuration %v must not be negative", o.ClusterSigningDuration)
	}
	if len(o.Previous) > 0 {
		bins := []string{"kube-apiserver", "kube-controller-manager"}
		if o.Nodes {
			bins = previousBinaries
		}
		for _, b := range bins {
			if _, err := os.Stat(filepath.Join(binDir, PreviousDir, b)); err != nil {
				return "", fmt.Errorf("%s of the previous Kubernetes release not found in %s: call EnsurePrevious before Start, or run 'make kube-bins-previous'", b, filepath.Join(binDir, PreviousDir))
			}
		}
	}
	for _, r := range o.PrivateImages {
		if !o.Nodes {
			return "", errors.New("Options.PrivateImages needs Options.Nodes: only nodes have registries")
		}
		if _, err := name.NewRepository(r); err != nil {
			return "", fmt.Errorf("Options.PrivateImages: %w", err)
		}
	}
	if o.Nodes {
		if len(o.Clusters) > host.MaxNodes {
			return "", fmt.Errorf("%d clusters with nodes: at most %d", len(o.Clusters), host.MaxNodes)
		}
		if err := checkNodeHost(binDir); err != nil {
			return "", err
		}
	}
	return binDir, nil
}

// checkClusterNames checks that every cluster name is a DNS label given
// once, and that the options naming clusters name only those.
func (o *Options) checkClusterNames() error {
	seen := map[string]bool{}
	for _, name := range o.Clusters {
		if !clusterNameRE.MatchString(name) || len(name) > 63 {
			return fmt.Errorf("cluster name %q is not a DNS label (lowercase letters, digits and '-', at most 63)", name)
		}
		if seen[name] {
			return fmt.Errorf("cluster name %q is given twice", name)
		}
		seen[name] = true
	}
	for _, field := range []struct {
		name  string
		names []string
	}{
		{"Previous", o.Previous}, {"NoClientSigning", o.NoClientSigning},
		{"PriorityAndFairness", o.PriorityAndFairness}, {"Profiling", o.Profiling},
	} {
		for _, name := range field.names {
			if !seen[name] {
				return fmt.Errorf("cluster %q is in Options.%s but not in Options.Clusters", name, field.name)
			}
		}
	}
	return nil
}

// newEnvironment returns the Environment of the completed opts, with its
// directory made and its clusters named, nothing started.
func newEnvironment(opts Options, binDir string) (*Environment, error) {
	e := &Environment{dir: opts.Dir, binDir: binDir, log: opts.Log, signingDuration: opts.ClusterSigningDuration}
	if e.log == nil {
		e.log = io.Discard
	}
	if e.dir == "" {
		dir, err := os.MkdirTemp("", "ocm-env-")
		if err != nil {
			return nil, err
		}
		e.dir, e.ownDir = dir, true
	} else if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return nil, err
	}
	for _, name := range opts.Clusters {
		c := &Cluster{Name: name, dir: filepath.Join(e.dir, name), bindIP: loopback, serviceCIDR: ServiceClusterIPRange, binDir: binDir}
		if slices.Contains(opts.Previous, name) {
			c.binDir = filepath.Join(binDir, PreviousDir)
		}
		c.noSigning = slices.Contains(opts.NoClientSigning, name)
		c.priorityAndFairness = slices.Contains(opts.PriorityAndFairness, name)
		c.profiling = slices.Contains(opts.Profiling, name)
		e.clusters = append(e.clusters, c)
	}
	return e, nil
}

// startClusters starts every cluster in parallel: each waits mostly on its
// own API server.
func (e *Environment) startClusters(ctx context.Context) error {
	errs := make([]error, len(e.clusters))
	var wg sync.WaitGroup
	for i, c := range e.clusters {
		wg.Go(func() { errs[i] = e.startCluster(ctx, c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// KubeBinDir returns the directory holding the Kubernetes binaries
// ($KUBE_BIN_DIR, else bin/kube under the repository root), after checking
// that the control-plane binaries are there.
func KubeBinDir() (string, error) { return resolveBinDir("") }

// resolveBinDir finds the directory holding the Kubernetes binaries and checks
// that each one is there.
func resolveBinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBE_BIN_DIR")
	}
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("find bin/kube: %w; set KUBE_BIN_DIR", err)
		}
		dir = filepath.Join(root, "bin", "kube")
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run 'make kube-bins' to build the Kubernetes binaries", b, dir)
		}
	}
	return dir, nil
}

// EnsurePrevious builds the previous Kubernetes release's binaries into
// binDir/previous (binDir empty: Options.BinDir's default) with
// `hack/kube-bins.sh --previous`, when they are missing or stale, writing
// its progress to log. Concurrent calls, from any process, wait for one
// build. A test that runs a cluster of the previous release (Options.
// Previous) calls it before Start, outside the time it gives Start: a cold
// build takes minutes, and only such tests need that release.
func EnsurePrevious(binDir string, log io.Writer) error {
	dir, err := resolveBinDir(binDir)
	if err != nil {
		return err
	}
	root, err := RepoRoot()
	if err != nil {
		return fmt.Errorf("find hack/kube-bins.sh: %w", err)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "kube-bins.sh"), "--previous", dir)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the previous Kubernetes release into %s (hack/kube-bins.sh --previous): %w", filepath.Join(dir, PreviousDir), err)
	}
	return nil
}

// RepoRoot returns the root of the kubectl-ocm repository: the nearest parent
// of the working directory whose go.mod declares the project's module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && regexp.MustCompile(`(?m)^module github.com/kubectl-ocm/kubectl-ocm$`).Match(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kubectl-ocm repository")
		}
		dir = parent
	}
}

// Cluster returns the named cluster, or nil.
func (e *Environment) Cluster(name string) *Cluster {
	for _, c := range e.clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Clusters returns every cluster, in the order they were named.
func (e *Environment) Clusters() []*Cluster { return append([]*Cluster(nil), e.clusters...) }

// Dir returns the environment's directory.
func (e *Environment) Dir() string { return e.dir }

// Kubeconfig returns the path of the kubeconfig with one cluster-admin
// context per cluster, named after the cluster.
func (e *Environment) Kubeconfig() string { return e.kubeconfig }

// Stop stops every controller manager, API server and etcd, and removes the
// directory if Start created it. It is safe to call more than once.
func (e *Environment) Stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		for _, c := range e.clusters {
			errs = append(errs, c.stop())
		}
		if e.etcd != nil {
			errs = append(errs, e.etcd.Stop(10*time.Second))
		}
		for _, r := range []*registry.Server{e.registry, e.private} {
			if r != nil {
				r.Stop()
			}
		}
		if e.slot != nil {
			errs = append(errs, e.slot.Release())
		}
		if e.ownDir {
			errs = append(errs, os.RemoveAll(e.dir))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

func (e *Environment) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "[framework] "+format+"\n", args...)
}

// writeKubeconfig writes one kubeconfig with a context per cluster.
func (e *Environment) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	for _, c := range e.clusters {
		cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Server(), CertificateAuthorityData: c.CAData()}
		cfg.AuthInfos[c.Name+"-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.admin.certPEM, ClientKeyData: c.admin.keyPEM}
		cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name + "-admin"}
	}
	cfg.CurrentContext = e.clusters[0].Name
	e.kubeconfig = filepath.Join(e.dir, "kubeconfig")
	return clientcmd.WriteToFile(*cfg, e.kubeconfig)
}

// Listeners' ports are chosen below Linux's default ephemeral range
// (32768-60999), where the kernel picks the local ports of outgoing
// connections: a port chosen there may be taken by any client's connection
// between choosing and binding it. Below it (and below the NodePort range,
// 30000-32767), only another listener chosen the same way can take it, and
// the choice is random.
const (
	listenPortMin = 20000
	listenPortMax = 29999
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for a
// listener a test or the local environment starts (tests that run side by
// side need distinct ports). Callers that start a process on it still retry
// when the process reports the address in use.
func FreePort() (int, error) {
	for range 100 {
		port := listenPortMin + rand.IntN(listenPortMax-listenPortMin+1) //nolint:gosec // a port number, not a secret
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WriteKubeconfig writes a kubeconfig for cfg (server, CA and credentials,
// including a bearer token file) to path, with a single context named name.
func WriteKubeconfig(path, name string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile,
		Token: cfg.BearerToken, TokenFile: cfg.BearerTokenFile,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}

// EtcdPid returns the process ID of the etcd every cluster shares, 0 when
// none runs.
func (e *Environment) EtcdPid() int {
	if e.etcd == nil {
		return 0
	}
	return e.etcd.Pid()
}

// EtcdURL returns the client URL of the shared etcd (plain HTTP on
// loopback), whose /metrics report its database size.
func (e *Environment) EtcdURL() string { return e.etcdURL }
