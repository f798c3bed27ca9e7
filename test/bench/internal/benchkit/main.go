package benchkit

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

const (
	// HubController is the hub controller Deployment (and process) name.
	HubController = "ocm-hub-controller"
	// AgentDeployment is the agent Deployment on a managed cluster.
	AgentDeployment = "klusterlet-agent"
	// FastPoll is the interval of the polls whose result is a measured time:
	// it bounds their resolution.
	FastPoll = 20 * time.Millisecond
	// SlowPoll is the interval of the polls that only wait.
	SlowPoll = 250 * time.Millisecond
)

// benchName names the benchmark package of the run ("Registration",
// "Work"), as given to Main: it titles the summary table and signs the
// acceptor's CSR approvals.
var benchName string

// Main runs the tests and benchmarks of m, removes the built binary and
// prints the summary table of every figure recorded, titled with name, with
// the wall time of the run. It returns the exit code for os.Exit; call it
// from TestMain.
func Main(m *testing.M, name string) int {
	benchName = name
	flag.Parse()
	// The component runner's caches log through controller-runtime; the
	// benchmarks' own lines are what matters.
	ctrllog.SetLogger(logr.Discard())
	start := time.Now()
	code := m.Run()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
	printSummary(os.Stdout, time.Since(start))
	return code
}

// builds are the binaries built for the run (never under plain `go test`),
// in one temporary directory, by name.
var builds struct {
	mu    sync.Mutex
	dir   string
	paths map[string]string
}

// Binary builds the main package pkg (a path relative to the repository
// root, such as "./controllers/cmd/ocm-controller") of this source tree as
// name, once per run, and returns its path. It builds as the image does
// (hack/image): static (CGO_ENABLED=0), -trimpath, without symbol table and
// DWARF (-s -w), so the memory figures are those of the shipped binary.
func Binary(b testing.TB, name, pkg string) string {
	b.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if p, ok := builds.paths[name]; ok {
		return p
	}
	root, err := framework.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	if builds.dir == "" {
		if builds.dir, err = os.MkdirTemp("", "ocm-bench-bin-"); err != nil {
			b.Fatal(err)
		}
		builds.paths = map[string]string{}
	}
	path := filepath.Join(builds.dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s from %s: %v\n%s", name, pkg, err, out)
	}
	builds.paths[name] = path
	return path
}

// Fleet is one benchmark's environment: the hub and managed control planes,
// the component runner running every ocm-controller Deployment, and the hub
// installed from config/hub.
type Fleet struct {
	// Env holds the control planes.
	Env *framework.Environment
	// Runner runs every ocm-controller Deployment as a local process.
	Runner *runner.Runner
	// Hub is the "hub" control plane.
	Hub *framework.Cluster
	// HubClient is an admin client of the hub.
	HubClient client.Client
	// JoinCA is the hub CA JoinCluster gives the agents: the hub's CA as
	// the environment started.
	JoinCA []byte
	// Standby is the standby hub "hub2" of FleetOptions.Standby, nil
	// without one.
	Standby *framework.Cluster
}

// StartFleet starts "hub" and the named managed clusters with the component
// runner, installs the hub with values (as `kubectl ocm hub init` does, its
// conversion webhook called at a free loopback port unless values name
// another URL) and
// waits until the hub controller is ready. Everything stops when b ends. It
// skips b under -short.
func StartFleet(b testing.TB, values config.HubOperatorValues, managed ...string) *Fleet {
	b.Helper()
	return StartFleetWithBinaries(b, values, nil, managed...)
}

// StartFleetWithBinaries is StartFleet with the component runner also
// running the Deployments of the images named in binaries (image name
// without registry and tag → binary path, see Binary), such as an add-on's
// agent.
func StartFleetWithBinaries(b testing.TB, values config.HubOperatorValues, binaries map[string]string, managed ...string) *Fleet {
	b.Helper()
	return StartFleetWith(b, FleetOptions{Values: values, Binaries: binaries}, managed...)
}

// FleetOptions are StartFleetWith's.
type FleetOptions struct {
	// Values install the hub.
	Values config.HubOperatorValues
	// Binaries are StartFleetWithBinaries'.
	Binaries map[string]string
	// NoClientSigning starts a hub whose controller manager signs no
	// client certificates (framework.Options.NoClientSigning).
	NoClientSigning bool
	// BeforeRunner, when set, acts on the environment before the
	// component runner starts anything, such as publishing a second hub
	// CA that the hub's own components then trust from their start.
	BeforeRunner func(ctx context.Context, env *framework.Environment) error
	// Standby also starts "hub2", installed as the hub is but approving
	// the bootstrap identity's requests by itself: a standby hub the
	// agents of StandbyHub fail over to.
	Standby bool
	// RunnerArgs are the component runner's runner.Options.ExtraArgs.
	RunnerArgs map[string][]string
	// Unmanaged are managed clusters whose Deployments the component
	// runner does not run: the targets of installs that are measured on
	// the hub's side alone.
	Unmanaged []string
}

// StartFleetWith is StartFleet with opts.
func StartFleetWith(b testing.TB, opts FleetOptions, managed ...string) *Fleet {
	b.Helper()
	framework.SkipIfShort(b)
	values := opts.Values
	images := map[string]string{"ocm-controller": Binary(b, "ocm-controller", "./controllers/cmd/ocm-controller")}
	for image, path := range opts.Binaries {
		images[image] = path
	}
	hubs := []string{"hub"}
	if opts.Standby {
		hubs = append(hubs, StandbyHubName)
	}
	// The hubs' API servers run API Priority and Fairness, as in
	// production: the hub controller has no client-side limit and relies on
	// its priority level (config/hub/15-hub-controller-flowcontrol.yaml).
	// They serve /debug/pprof, so that a benchmark's hub can be profiled.
	envOpts := framework.Options{Clusters: append(hubs, managed...), PriorityAndFairness: hubs, Profiling: hubs}
	if opts.NoClientSigning {
		envOpts.NoClientSigning = []string{"hub"}
	}
	env := framework.StartForTestWith(b, envOpts)
	ctx, cancel := context.WithTimeout(b.Context(), 3*time.Minute)
	defer cancel()
	joinCA := env.Cluster("hub").CAData()
	if opts.BeforeRunner != nil {
		if err := opts.BeforeRunner(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
	var run []*framework.Cluster
	for _, c := range env.Clusters() {
		if !slices.Contains(opts.Unmanaged, c.Name) {
			run = append(run, c)
		}
	}
	componentRunner := runner.StartForTestWith(b, runner.Options{Binaries: images, Clusters: run, ExtraArgs: opts.RunnerArgs})
	f := &Fleet{Env: env, Runner: componentRunner, Hub: env.Cluster("hub"), JoinCA: joinCA}
	f.HubClient = f.Hub.Client()

	installHub(ctx, b, f.HubClient, values)
	if opts.Standby {
		f.Standby = env.Cluster(StandbyHubName)
		standby := opts.Values
		standby.AutoApproveUsers = append(slices.Clone(standby.AutoApproveUsers), identity.BootstrapUser)
		installHub(ctx, b, f.Standby.Client(), standby)
		f.WaitReady(ctx, b, StandbyHubName, config.HubNamespace, HubController)
	}
	f.WaitReady(ctx, b, "hub", config.HubNamespace, HubController)
	f.warmUp(ctx, b)
	return f
}

// StandbyHubName names the standby hub of FleetOptions.Standby.
const StandbyHubName = "hub2"

// installHub installs a hub with values, as `kubectl ocm hub init` does, its
// conversion webhook called at a free loopback port unless values name
// another URL.
func installHub(ctx context.Context, b testing.TB, c client.Client, values config.HubOperatorValues) {
	b.Helper()
	if values.ConversionWebhookURL == "" {
		// The local API server reaches no Service: it calls the hub
		// controller's conversion webhook at a free loopback port, as
		// `kubectl ocm hub init --conversion-webhook-url` sets it up.
		port, err := framework.FreePort()
		if err != nil {
			b.Fatal(err)
		}
		values.ConversionWebhookURL = fmt.Sprintf("https://127.0.0.1:%d/convert", port)
	}
	objs, err := config.HubOperatorObjects(values)
	if err != nil {
		b.Fatalf("render hub objects: %v", err)
	}
	if err := apply.Apply(ctx, c, objs, apply.Options{}); err != nil {
		b.Fatalf("install the hub: %v", err)
	}
}

// warmUp makes one server-side dry-run ManagedCluster create as the admin
// and logs how long it took. kube-apiserver holds every create of a custom
// resource for 2 s while its CRD has been Established for less than 2 s
// (apiextensions-apiserver's customresource_handler.go); a cluster joining
// right after the hub install would pay that once, a real hub never does, so
// it is paid here, outside every measured interval.
func (f *Fleet) warmUp(ctx context.Context, b testing.TB) {
	b.Helper()
	start := time.Now()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "bench-warm-up"}}
	if err := f.HubClient.Create(ctx, mc, client.DryRunAll); err != nil {
		b.Fatalf("dry-run create of a ManagedCluster on the new hub: %v", err)
	}
	b.Logf("warm-up: the first ManagedCluster create (dry run) on the new hub took %s", time.Since(start).Round(time.Millisecond))
}

// WaitReady waits until the runner runs Deployment namespace/name of cluster
// and the process answers 200 on /readyz of its health probe address.
func (f *Fleet) WaitReady(ctx context.Context, b testing.TB, cluster, namespace, name string) {
	b.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	Poll(ctx, b, SlowPoll, 2*time.Minute, fmt.Sprintf("%s/%s on %s ready", namespace, name, cluster), func(ctx context.Context) (bool, error) {
		info, ok := f.Runner.Process(cluster, namespace, name)
		if !ok || info.Pid == 0 {
			return false, nil
		}
		addr := FlagValue(info.Args, "--health-probe-bind-address")
		if addr == "" {
			return false, fmt.Errorf("no --health-probe-bind-address in %v", info.Args)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// Pid returns the process ID of Deployment namespace/name of cluster, 0 when
// no process runs.
func (f *Fleet) Pid(cluster, namespace, name string) int {
	info, ok := f.Runner.Process(cluster, namespace, name)
	if !ok {
		return 0
	}
	return info.Pid
}

// FlagValue returns the value of flag name in args, written "--name=value" or
// "--name value", or "".
func FlagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// Poll calls cond every interval until it returns true and returns the moment
// it did; after timeout it fails b naming what and cond's last error. Errors
// from cond do not stop the polling.
func Poll(ctx context.Context, b testing.TB, interval, timeout time.Duration, what string, cond func(context.Context) (bool, error)) time.Time {
	b.Helper()
	at, err := PollErr(ctx, interval, timeout, what, cond)
	if err != nil {
		b.Fatal(err)
	}
	return at
}

// PollErr is Poll returning the failure instead, for goroutines.
func PollErr(ctx context.Context, interval, timeout time.Duration, what string, cond func(context.Context) (bool, error)) (time.Time, error) {
	var last error
	var at time.Time
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		if ok {
			at = time.Now()
		}
		return ok, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
	return at, nil
}
