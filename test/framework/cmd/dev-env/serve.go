package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Files under --dir.
const (
	pidFile   = "dev-env.pid"
	readyFile = "ready"
	// proxyURLFile holds the URL of the HTTP proxy in front of the hub.
	proxyURLFile = "proxy-url"
	// hubViaProxyFile holds the hub's URL by the name only the proxy
	// resolves.
	hubViaProxyFile = "hub-url-via-proxy"
	logFile         = "dev-env.log"
	// privateRegistryFile holds a docker config.json with the private
	// registry's credentials.
	privateRegistryFile = "private-registry.json"
	// envSubdir holds the framework's environment.
	envSubdir = "env"
)

func (o *options) path(name string) string { return filepath.Join(o.dir, name) }

// running returns the PID of a live serve process recorded in the pid file, or 0.
func (o *options) running() int {
	b, err := os.ReadFile(o.path(pidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// runningClusters returns the clusters of the running environment's
// kubeconfig, one context each.
func (o *options) runningClusters() []string {
	cfg, err := clientcmd.LoadFromFile(o.path("kubeconfig"))
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(cfg.Contexts))
}

// sameSet reports whether a and b hold the same names.
func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// up starts `dev-env serve` detached from the terminal and waits until it
// reports ready, showing its progress.
func (o *options) up(ctx context.Context, out io.Writer) error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	o.dir = abs
	if pid := o.running(); pid != 0 {
		if running := o.runningClusters(); !sameSet(running, o.clusters) {
			return fmt.Errorf("the development environment running (pid %d) has clusters %s, not %s: stop it with 'make dev-env-down' and start it again",
				pid, strings.Join(running, ", "), strings.Join(o.clusters, ", "))
		}
		fmt.Fprintf(out, "The development environment is already running (pid %d).\n\n", pid)
		o.printUsage(out)
		return nil
	}
	if len(o.previous) > 0 {
		// Built here, with its progress shown, rather than in the
		// background environment's startup time.
		if err := framework.EnsurePrevious(o.kubeBinDir, out); err != nil {
			return err
		}
	}
	_ = os.Remove(o.path(readyFile))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	log, err := os.Create(o.path(logFile))
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{"serve", "--dir", o.dir, "--kube-bin-dir", o.kubeBinDir, "--dist-dir", o.distDir, "--clusters", strings.Join(o.clusters, ","), "--previous=" + strings.Join(o.previous, ",")}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// A new session: the environment outlives this command and the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the environment: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(out, "Starting %s (log: %s) ", strings.Join(o.clusters, ", "), o.path(logFile))
	deadline := time.After(5 * time.Minute)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if _, err := os.Stat(o.path(readyFile)); err == nil {
			fmt.Fprintln(out, "ready.")
			fmt.Fprintln(out)
			o.printUsage(out)
			return nil
		}
		select {
		case err := <-exited:
			fmt.Fprintln(out)
			return fmt.Errorf("the environment exited during startup (%v); last lines of %s:\n%s", err, o.path(logFile), tail(o.path(logFile), 15))
		case <-deadline:
			fmt.Fprintln(out)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			return fmt.Errorf("the environment was not ready after 5 minutes; it was stopped. Last lines of %s:\n%s", o.path(logFile), tail(o.path(logFile), 15))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			fmt.Fprint(out, ".")
		}
	}
}

func (o *options) printUsage(out io.Writer) {
	kubeconfig := o.path("kubeconfig")
	fmt.Fprintf(out, `Clusters %s are running: each a real kube-apiserver,
kube-controller-manager and kube-scheduler, with a node of its own (a kubelet,
kube-proxy and containerd) that runs Pods from the images of make image and
make sandbox-images (logs under %s).

Use them:
  export KUBECONFIG=%s
  kubectl config get-contexts          # kubectl is also in bin/kube/kubectl
  kubectl --context %s get nodes

Install the hub:
  kubectl ocm hub init --context %s --wait
%s
An HTTP proxy in front of the hub, for join --proxy-url: its URL is in %s,
the hub's URL through it (a name only the proxy resolves) in %s.

A private registry the nodes pull from only with credentials, %s: the
ocm-controller image is there as %s/kubectl-ocm/ocm-controller:<tag>,
and %s is a docker config.json with its credentials (the
.dockerconfigjson of an imagePullSecret). Install from it:
  kubectl ocm hub init --context %s --wait --image-registry %s/kubectl-ocm --image-pull-credentials %s

Load images built elsewhere (a docker save archive or an OCI layout) so that
every node pulls them by their names:
  make dev-env-load IMAGE=<path>

Stop them, and everything they started:
  make dev-env-down
`, strings.Join(o.clusters, ", "), o.path("env"), kubeconfig, o.clusters[0], o.clusters[0], o.standbyUsage(), o.path(proxyURLFile), o.path(hubViaProxyFile),
		framework.PrivateRegistryHost, framework.PrivateRegistryHost, o.path(privateRegistryFile),
		o.clusters[0], framework.PrivateRegistryHost, o.path(privateRegistryFile))
}

// standbyHub is the cluster of the environment meant as a standby hub.
const standbyHub = "hub2"

// standbyUsage tells how to install the standby hub, when the environment
// has one.
func (o *options) standbyUsage() string {
	if !slices.Contains(o.clusters, standbyHub) {
		return ""
	}
	return fmt.Sprintf(`
A standby hub, for join --add-hub (clusters move to it when the hub stops
answering):
  kubectl ocm hub init --context %s --wait
`, standbyHub)
}

// serve runs the environment until SIGTERM or SIGINT.
func (o *options) serve(ctx context.Context, out io.Writer) error {
	// The framework's clients log through controller-runtime; its own
	// progress lines are what the log shows.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := os.WriteFile(o.path(pidFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(o.path(pidFile))
	envDir := o.path(envSubdir)
	if err := os.RemoveAll(envDir); err != nil {
		return err
	}
	if o.distDir != "" {
		if err := os.Setenv(framework.DistDirEnv, o.distDir); err != nil {
			return err
		}
	}
	layouts, err := framework.DefaultImages()
	if err != nil {
		return err
	}
	env, err := framework.Start(ctx, framework.Options{
		Clusters: o.clusters, Dir: envDir, BinDir: o.kubeBinDir, Log: out,
		Nodes: true, Images: layouts, StartTimeout: 5 * time.Minute, Previous: o.previous,
		PrivateImages: []string{config.DefaultImageRegistry + "/" + config.ControllerImageName},
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out, "stopping the environment")
		if err := env.Stop(); err != nil {
			fmt.Fprintf(out, "stop: %v\n", err)
		}
	}()
	// An HTTP proxy in front of the hub, for clusters that join through one
	// (join --proxy-url): the hub is reached by its hostname, which only the
	// proxy resolves.
	hub := env.Clusters()[0]
	hubHost, err := url.Parse(hub.Server())
	if err != nil {
		return err
	}
	proxy, err := framework.StartHTTPProxy(hubHost.Hostname(), hub)
	if err != nil {
		return err
	}
	defer proxy.Close()
	for name, value := range map[string]string{proxyURLFile: proxy.URL(), hubViaProxyFile: hub.HostnameURL()} {
		if err := os.WriteFile(o.path(name), []byte(value+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(o.path(privateRegistryFile), env.PrivateRegistry().DockerConfigJSON(), 0o600); err != nil {
		return err
	}
	defer os.Remove(o.path(privateRegistryFile))
	kubeconfig, err := os.ReadFile(env.Kubeconfig())
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.path("kubeconfig"), kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(o.path(readyFile), []byte(o.path("kubeconfig")), 0o644); err != nil {
		return err
	}
	defer os.Remove(o.path(readyFile))
	fmt.Fprintln(out, "ready")
	<-ctx.Done()
	return nil
}

// down stops a running serve process: SIGTERM, then SIGKILL to its process
// group after a grace period.
func (o *options) down(out io.Writer) error {
	pid := o.running()
	if pid == 0 {
		fmt.Fprintln(out, "The development environment is not running.")
		_ = os.Remove(o.path(readyFile))
		return o.sweep(out)
	}
	fmt.Fprintf(out, "Stopping the development environment (pid %d) ", pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for range 60 {
		if syscall.Kill(pid, 0) != nil {
			fmt.Fprintln(out, "stopped.")
			return o.sweep(out)
		}
		time.Sleep(time.Second)
		fmt.Fprint(out, ".")
	}
	// Its children die with it (they have Pdeathsig set); what its nodes
	// ran besides is removed with what it left on the host.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill pid %d: %w", pid, err)
	}
	fmt.Fprintln(out, "killed after 60s.")
	return o.sweep(out)
}

// load loads the images of the archive or layout at path into the running
// environment.
func (o *options) load(ctx context.Context, out io.Writer, path string) error {
	if o.running() == 0 {
		return fmt.Errorf("no development environment is running in %s: start one with 'make dev-env'", o.dir)
	}
	if _, err := os.Stat(o.path(readyFile)); err != nil {
		return fmt.Errorf("the development environment in %s is still starting: load images once 'make dev-env' has printed how to use it", o.dir)
	}
	names, err := framework.LoadImageInto(ctx, o.path(envSubdir), path, o.name)
	if errors.Is(err, framework.ErrNoRepository) {
		return fmt.Errorf("%w: give it with --name REPOSITORY (make dev-env-load NAME=REPOSITORY)", err)
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(out, "Loaded %s\n", n)
	}
	fmt.Fprintf(out, "Every node of the environment in %s pulls them by these names.\n", o.dir)
	return nil
}

// sweep removes what environments whose process is gone left on the host.
func (o *options) sweep(out io.Writer) error {
	swept, err := framework.SweepAbandoned()
	for _, s := range swept {
		fmt.Fprintf(out, "Removed what an environment that is gone left on the host (%s).\n", s)
	}
	return err
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
