package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// bins holds the binaries under test, built once for the package.
var bins struct {
	kubectlOCM    string
	ocmController string
	// helloworldAddon is the agent of the example add-on
	// (examples/addons/helloworld), which the hub deploys to managed clusters.
	helloworldAddon string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	// The component runner's caches log through controller-runtime; its own
	// progress lines are what the tests show.
	ctrllog.SetLogger(logr.Discard())
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "ocm-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := framework.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins.kubectlOCM = filepath.Join(dir, "kubectl-ocm")
	bins.ocmController = filepath.Join(dir, "ocm-controller")
	bins.helloworldAddon = filepath.Join(dir, "helloworld-addon")
	build := exec.Command("go", "build", "-o", dir+"/", "./plugins/kubectl-ocm", "./controllers/cmd/ocm-controller")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the binaries under test: %v\n%s", err, out)
		return 1
	}
	// The agent's package is named for its directory; its binary for its image.
	build = exec.Command("go", "build", "-o", bins.helloworldAddon, "./examples/addons/helloworld/agent")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the example add-on's agent: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// fleet is a hub and managed clusters with the component runner running the
// project's Deployments on each.
type fleet struct {
	env    *framework.Environment
	runner *framework.Runner
}

// startFleet starts the named clusters (the first is the hub) and the runner,
// which runs the product's Deployments and the example add-on's agent.
func startFleet(t *testing.T, clusters ...string) *fleet {
	t.Helper()
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, clusters...)
	runner := framework.StartRunnerForTest(t, map[string]string{
		"ocm-controller":   bins.ocmController,
		"helloworld-addon": bins.helloworldAddon,
	}, env.Clusters()...)
	return &fleet{env: env, runner: runner}
}

// ocm runs `kubectl ocm args...` with the fleet's kubeconfig, logs the command
// line as a user would type it and its output, and fails the test if it fails.
func (f *fleet) ocm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := f.tryOCM(t, args...)
	if err != nil {
		t.Fatalf("kubectl ocm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// tryOCM is ocm without failing the test.
func (f *fleet) tryOCM(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.kubectlOCM, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.env.Kubeconfig())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("$ kubectl ocm %s\n%s", strings.Join(args, " "), out.String())
	return out.String(), err
}

// eventually polls cond every 200ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// hubInit runs `kubectl ocm hub init --context hub --wait` and returns its
// output. The local API server reaches no Service, so the hub controller's
// conversion webhook is called at a free loopback port instead
// (--conversion-webhook-url), which the runner leaves to the controller.
func (f *fleet) hubInit(t *testing.T) string {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return f.ocm(t, "hub", "init", "--context", "hub", "--wait", "--conversion-webhook-url", fmt.Sprintf("https://127.0.0.1:%d/convert", port))
}

// joinAll installs the hub, joins the named clusters and accepts them, all
// through kubectl-ocm, and waits until each is Available.
func (f *fleet) joinAll(t *testing.T, clusters ...string) {
	t.Helper()
	f.joinAllVia(t, func(hub string) string { return hub }, clusters...)
}

// joinAllVia is joinAll with the agents given via(hub) as the hub API
// server's URL, where hub is the URL hub init printed: a proxy in front of
// the hub, for example.
func (f *fleet) joinAllVia(t *testing.T, via func(hub string) string, clusters ...string) {
	t.Helper()
	token, apiserver := joinArgs(t, f.hubInit(t))
	for _, c := range clusters {
		f.ocm(t, "join", "--hub-token", token, "--hub-apiserver", via(apiserver), "--cluster-name", c, "--context", c)
	}
	f.ocm(t, "accept", "--clusters", strings.Join(clusters, ","), "--context", "hub", "--wait")
	hub := f.env.Cluster("hub").Client()
	for _, c := range clusters {
		eventually(t, 2*time.Minute, c+" Available", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
		})
	}
}

// agentPID returns the PID of the agent process of a managed cluster.
func (f *fleet) agentPID(t *testing.T, cluster string) int {
	t.Helper()
	return f.pid(t, cluster, "open-cluster-management-agent", "klusterlet-agent")
}
