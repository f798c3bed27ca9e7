// Package runner is the component Runner: a test harness that plays the
// part of the kubelet for the project's own Deployments on the clusters of
// a test environment without nodes, running each as a local process that
// authenticates as its Pod's ServiceAccount, and writing the Deployment's
// status as the deployment controller would. It remains where a test needs
// hundreds of agents, or a fault a kubelet cannot give (killing or
// restarting one component's process, wrapping its binary); tests that can
// run the product's real Pods use an environment with nodes instead.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Which Deployments the Runner runs by default: those whose label
// app.kubernetes.io/part-of says they belong to the project.
const (
	// ProductPartOf is the app.kubernetes.io/part-of value of every Deployment
	// the product ships (ocm-controller on the hub and the managed clusters).
	ProductPartOf = apply.PartOfLabelValue
	// ExamplesPartOf is the app.kubernetes.io/part-of value of the Deployments
	// of the repository's examples, such as the agent of the helloworld
	// add-on (examples/addons/helloworld), which the hub deploys to managed
	// clusters. Their images map to binaries `make build` also builds.
	ExamplesPartOf = "kubectl-ocm-examples"
	// DefaultSelector selects the Deployments the component Runner runs
	// by default: those of the product and of its examples.
	DefaultSelector = apply.PartOfLabelKey + " in (" + ProductPartOf + "," + ExamplesPartOf + ")"
)

// Options configure a component Runner.
type Options struct {
	// Clusters are the clusters whose Deployments the Runner runs. The Runner
	// watches them with each cluster's admin configuration.
	Clusters []*framework.Cluster
	// Binaries maps a container image repository name to a local binary, e.g.
	// "ocm-controller" → "bin/ocm-controller". An image matches on
	// the last element of its repository path without tag or digest, so
	// "quay.io/x/ocm-controller:v1" runs the binary of "ocm-controller". A key
	// may also be written as a full repository ("quay.io/x/ocm-controller"): it
	// is reduced the same way.
	Binaries map[string]string
	// Selector is the label selector of the Deployments to run, in all
	// namespaces. Default: DefaultSelector.
	Selector string
	// Dir holds per-process files (kubeconfig, token, volumes) and logs:
	// <Dir>/<cluster>/<namespace>/<deployment>/ and
	// <Dir>/<cluster>/<namespace>/<deployment>.log. Required.
	Dir string
	// Log receives one line per lifecycle event (start, exit, stop). Default:
	// discarded.
	Log io.Writer
	// ExtraArgs are arguments appended to those of the Deployments of the
	// names they are keyed by, in every namespace and cluster: a setting
	// that a Pod needs only because the Runner runs it on the host, such as
	// the cluster importer's --allow-loopback-import (the clusters' API
	// servers listen on loopback here).
	ExtraArgs map[string][]string
}

// Runner is a test harness that plays the part of the kubelet for the
// project's own components. The local control planes have no kubelet and no
// scheduler, so nothing would ever run the Pods of a Deployment; instead the
// Runner watches the Deployments matching its selector in each cluster and runs
// one local process per Deployment whose spec.replicas is not 0:
//
//   - The Deployments are those labeled app.kubernetes.io/part-of=kubectl-ocm
//     (the product's) or app.kubernetes.io/part-of=kubectl-ocm-examples (the
//     examples', such as an example add-on's agent that the hub deploys),
//     unless Options.Selector says otherwise. Any other Deployment is
//     left alone: it gets no process and no status.
//   - The binary is the one mapped from the first container's image (see
//     Options.Binaries); a Deployment whose image maps to no binary gets
//     a False Progressing condition with reason ImageNotMapped.
//   - The arguments are container.command[1:] followed by container.args when
//     command is set, else container.args, with $(VAR) references expanded as
//     the kubelet does.
//   - The environment holds the container's env and envFrom (literal values,
//     Secret and ConfigMap keys, and the fieldRefs metadata.namespace,
//     metadata.name (the Deployment's name + "-local"), metadata.labels[...],
//     metadata.annotations[...], spec.serviceAccountName, spec.nodeName and
//     status.podIP/hostIP (127.0.0.1)), plus KUBECONFIG and HOME. It never holds
//     KUBERNETES_SERVICE_* or KUBERNETES_PORT*: nothing may reach a Service IP.
//   - The process authenticates as the Pod's ServiceAccount: the Runner
//     requests a one-hour token through the TokenRequest API, refreshes it every
//     twenty minutes, and points KUBECONFIG at a kubeconfig for 127.0.0.1 whose
//     user reads that token file (tokenFile), unless the container sets
//     KUBECONFIG itself. The usual in-cluster files (token, ca.crt, namespace)
//     are written too, and /var/run/secrets/kubernetes.io/serviceaccount is
//     rewritten to their directory like a volume mount.
//   - Secret, ConfigMap and emptyDir volumes mounted into the first container
//     are materialized under the process directory and Secret and ConfigMap
//     contents are kept in sync every second. Because the process runs on the
//     host, every occurrence of a volumeMount's mountPath (as a path prefix) in
//     the arguments and environment values is rewritten to the local directory.
//   - Options.ExtraArgs of the Deployment's name follow the arguments.
//   - Every --<name>-bind-address flag (for example --metrics-bind-address or
//     --health-probe-bind-address, as "--flag=value" or "--flag value") whose
//     value is neither "0" nor empty is rewritten to 127.0.0.1:<free port>, so
//     that processes never collide on ports nor listen beyond loopback. Use
//     Process to find the rewritten arguments.
//   - The Runner writes the Deployment's status (the clusters' controller
//     managers run without the deployment controller) and never changes its
//     spec or metadata. A process counts as one available replica whatever
//     spec.replicas says.
//   - A process restarts when the pod template changes, restarts with back-off
//     (1s doubling to 30s) when it exits on its own, and stops when its
//     Deployment is deleted or scaled to 0. Stop stops every process.
//
// Processes log to <Dir>/<cluster>/<namespace>/<deployment>.log, appending
// across restarts.
type Runner struct {
	opts     Options
	selector labels.Selector
	binaries map[string]string
	log      io.Writer
	logMu    sync.Mutex

	mu       sync.Mutex
	clusters []*clusterRunner
	cancel   context.CancelFunc
	started  bool
	stopOnce sync.Once
	stopErr  error
}

// ProcessInfo describes the process the Runner runs for one Deployment.
type ProcessInfo struct {
	// Pid is the process ID, 0 when no process is running.
	Pid int
	// Binary is the local binary the process runs.
	Binary string
	// Args are the arguments after rewriting.
	Args []string
	// Restarts counts the times the process exited on its own and was started again.
	Restarts int
	// LogPath is the file receiving the process's stdout and stderr.
	LogPath string
	// Dir holds the process's kubeconfig, token and volumes.
	Dir string
}

// New returns a Runner for opts. It does nothing until Start.
func New(opts Options) *Runner {
	r := &Runner{opts: opts, log: opts.Log, binaries: map[string]string{}}
	if r.log == nil {
		r.log = io.Discard
	}
	for image, path := range opts.Binaries {
		r.binaries[imageName(image)] = path
	}
	return r
}

// Start starts watching every cluster and returns once each cluster's cache
// has synced. The Runner then runs until Stop; ctx bounds only the start-up.
// If Start fails, it stops whatever it started.
func (r *Runner) Start(ctx context.Context) (err error) {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("component runner: already started")
	}
	defer func() { // runs after the unlock below
		if err != nil {
			_ = r.Stop()
		}
	}()
	defer r.mu.Unlock()
	if r.opts.Dir == "" {
		return errors.New("component runner: Options.Dir is required")
	}
	sel, selector, err := parseSelector(r.opts.Selector)
	if err != nil {
		return fmt.Errorf("component runner: %w", err)
	}
	r.selector = selector
	r.started = true
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	for _, c := range r.opts.Clusters {
		cr, err := newClusterRunner(r, c)
		if err != nil {
			return fmt.Errorf("component runner: %w", err)
		}
		r.clusters = append(r.clusters, cr)
		if err := cr.start(runCtx, ctx); err != nil {
			return fmt.Errorf("component runner: start watching cluster %s: %w", c.Name, err)
		}
	}
	r.logf("watching Deployments labeled %q in %d cluster(s); binaries for images %s",
		sel, len(r.clusters), strings.Join(r.knownImages(), ", "))
	return nil
}

// Stop stops watching and stops every process, waiting for each to exit. It is
// safe to call more than once and before Start.
func (r *Runner) Stop() error {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		clusters := r.clusters
		cancel := r.cancel
		r.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		errs := make([]error, len(clusters))
		var wg sync.WaitGroup
		for i, c := range clusters {
			wg.Go(func() { errs[i] = c.stop() })
		}
		wg.Wait()
		r.stopErr = errors.Join(errs...)
	})
	return r.stopErr
}

// LogPath returns the log file of the process for Deployment namespace/name in
// the named cluster. The file exists once the process has started.
func (r *Runner) LogPath(cluster, namespace, name string) string {
	return filepath.Join(r.opts.Dir, cluster, namespace, name+".log")
}

// Process describes the process run for Deployment namespace/name in the named
// cluster; ok is false when the Runner knows no such Deployment.
func (r *Runner) Process(cluster, namespace, name string) (info ProcessInfo, ok bool) {
	r.mu.Lock()
	clusters := r.clusters
	r.mu.Unlock()
	for _, c := range clusters {
		if c.cluster.Name == cluster {
			return c.processInfo(namespace, name)
		}
	}
	return ProcessInfo{}, false
}

// StartForTest starts a Runner for clusters with binaries for t, keeping
// its files under a temporary directory (or the environment's framework.KeepDirEnv
// directory), and stops it when t ends. It fails t if the Runner cannot start.
func StartForTest(t testing.TB, binaries map[string]string, clusters ...*framework.Cluster) *Runner {
	t.Helper()
	return StartForTestWith(t, Options{Binaries: binaries, Clusters: clusters})
}

// StartForTestWith is StartForTest with the Runner's options; Dir and Log
// are set for t.
func StartForTestWith(t testing.TB, opts Options) *Runner {
	t.Helper()
	dir := t.TempDir()
	if keep := os.Getenv(framework.KeepDirEnv); keep != "" {
		dir = filepath.Join(keep, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), "runner")
	}
	opts.Dir, opts.Log = dir, framework.TestLogWriter(t)
	r := New(opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("component runner files (process logs, kubeconfigs) were in %s", dir)
		}
		if err := r.Stop(); err != nil {
			t.Errorf("stop component runner: %v", err)
		}
	})
	if err := r.Start(ctx); err != nil {
		t.Fatalf("start component runner: %v", err)
	}
	return r
}

// parseSelector returns the selector the Runner uses for Options.Selector
// sel, as written (DefaultSelector when sel is empty) and parsed.
func parseSelector(sel string) (string, labels.Selector, error) {
	if sel == "" {
		sel = DefaultSelector
	}
	selector, err := labels.Parse(sel)
	if err != nil {
		return "", nil, fmt.Errorf("parse selector %q: %w", sel, err)
	}
	return sel, selector, nil
}

// binaryFor returns the local binary for image, or an error naming the image
// and the images the Runner knows.
func (r *Runner) binaryFor(image string) (string, error) {
	if path, ok := r.binaries[imageName(image)]; ok {
		return path, nil
	}
	known := r.knownImages()
	if len(known) == 0 {
		return "", fmt.Errorf("image %q maps to no local binary: the component runner knows no images", image)
	}
	return "", fmt.Errorf("image %q maps to no local binary; known images: %s", image, strings.Join(known, ", "))
}

// knownImages lists the image names the Runner has binaries for, sorted.
func (r *Runner) knownImages() []string {
	names := make([]string, 0, len(r.binaries))
	for name := range r.binaries {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// imageName reduces an image reference to the last element of its repository
// path: "quay.io/x/ocm-controller:v1@sha256:…" → "ocm-controller". A registry
// port ("host:5000/name") is not mistaken for a tag.
func imageName(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return image
}

// logf writes one line to the Runner's log.
func (r *Runner) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.log, "[runner] "+format+"\n", args...)
}
