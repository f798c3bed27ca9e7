package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// bins holds the binaries under test, built once for the package, and the
// images the nodes run.
var bins struct {
	// kubectlOCM is stamped with the version of the ocm-controller image
	// `make image` built, so that the image it deploys by default is that
	// one.
	kubectlOCM string
	// ocmController and helloworldAddon are what the component runner runs
	// for the fleets without nodes (startRunnerFleet).
	ocmController   string
	helloworldAddon string
	// images are the OCI layouts of `make node-images`; version is the
	// version of the ocm-controller image in them, upgradeVersion that of
	// the second one upgrades move to.
	images                  []framework.ImageLayout
	version, upgradeVersion string
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
	if bins.images, err = framework.DefaultImages(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if bins.version, err = framework.LayoutTag(bins.images[1].Dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(bins.images) < 3 {
		fmt.Fprintln(os.Stderr, "no second ocm-controller image in dist/upgrade: run 'make node-images' first")
		return 1
	}
	if bins.upgradeVersion, err = framework.LayoutTag(bins.images[2].Dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins.kubectlOCM = filepath.Join(dir, "kubectl-ocm")
	bins.ocmController = filepath.Join(dir, "ocm-controller")
	bins.helloworldAddon = filepath.Join(dir, "helloworld-addon")
	if err := framework.Build(dir+"/", "./plugins/kubectl-ocm", version.StampFlags(bins.version)...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := framework.Build(dir+"/", "./controllers/cmd/ocm-controller"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The agent's package is named for its directory; its binary for its image.
	if err := framework.Build(bins.helloworldAddon, "./examples/addons/helloworld/agent"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := useFleetLimit(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the shared fleet: %v\n", err)
		code = 1
	}
	return code
}

// fleet is a hub and managed clusters. Each cluster has a node that runs the
// product's Pods from the images of `make node-images`; on a fleet of
// startFleetWithHubArgs, the component runner runs the project's Deployments
// as local processes instead.
type fleet struct {
	env    *framework.Environment
	runner *runner.Runner
	// joinFlags are added to every join of joinAll, such as
	// --registration-auth token.
	joinFlags []string
}

// startFleet starts the named clusters (the first is the hub), each with a
// node.
func startFleet(t *testing.T, clusters ...string) *fleet {
	t.Helper()
	return startFleetWith(t, framework.Options{Clusters: clusters})
}

// startFleetWith starts the clusters of opts, each with a node.
func startFleetWith(t *testing.T, opts framework.Options) *fleet {
	t.Helper()
	framework.SkipIfShort(t)
	opts.Nodes, opts.Images = true, bins.images
	if len(opts.Previous) > 0 {
		ensurePrevious(t)
	}
	return &fleet{env: framework.StartForTestWith(t, opts)}
}

// previousBuilt is the outcome of the one build of the previous Kubernetes
// release that the tests running it share.
var previousBuilt = sync.OnceValue(func() error {
	var out strings.Builder
	if err := framework.EnsurePrevious("", &out); err != nil {
		return fmt.Errorf("%w\n%s", err, out.String())
	}
	fmt.Fprint(os.Stderr, out.String())
	return nil
})

// ensurePrevious builds the previous Kubernetes release's binaries, once,
// for the tests that run a cluster of it.
func ensurePrevious(t *testing.T) {
	t.Helper()
	if err := previousBuilt(); err != nil {
		t.Fatal(err)
	}
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
	out, err := f.quietOCM(t.Context(), args...)
	t.Logf("$ kubectl ocm %s\n%s", strings.Join(args, " "), out)
	return out, err
}

// quietOCM is tryOCM without logging, for commands a test polls.
func (f *fleet) quietOCM(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.kubectlOCM, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.env.Kubeconfig())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// hubInit runs `kubectl ocm hub init --context hub --wait` with
// hubLeaseArgs and returns its output.
func (f *fleet) hubInit(t *testing.T) string {
	t.Helper()
	return f.ocm(t, slices.Concat([]string{"hub", "init", "--context", "hub", "--wait"}, hubLeaseArgs, f.webhookFlags(t))...)
}

// hubLeaseArgs set the hub controller's leader election timings
// (spec.leaderElection) to controller-runtime's 15 s, 10 s and 2 s, which
// the agent keeps by default, rather than the hub's longer defaults: the
// tests that kill the hub controller then wait out a 15 s lease, as they
// always did, and every component of the fleet has the timings
// leaderRenewDeadline and leaderRetryPeriod name.
var hubLeaseArgs = []string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}

// webhookFlags are the flags hub init needs on this fleet: none with nodes.
// Without, the API server reaches no Service, so the hub controller's
// conversion webhook is called at a free loopback port instead, which the
// runner leaves to the controller.
func (f *fleet) webhookFlags(t *testing.T) []string {
	t.Helper()
	if f.runner == nil {
		return nil
	}
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return []string{fmt.Sprintf("--conversion-webhook-url=https://127.0.0.1:%d/convert", port)}
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
	out := f.hubInit(t)
	token, apiserver := joinArgs(t, out)
	pins := pinFlags(t, out)
	for _, c := range clusters {
		args := append([]string{"join", "--hub-token", token, "--hub-apiserver", via(apiserver), "--cluster-name", c, "--context", c}, pins...)
		f.ocm(t, append(args, f.joinFlags...)...)
	}
	f.ocm(t, "accept", "--clusters", strings.Join(clusters, ","), "--context", "hub", "--wait")
	hub := f.env.Cluster("hub").Client()
	for _, c := range clusters {
		framework.Eventually(t.Context(), t, 2*time.Minute, c+" Available", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
		})
	}
}

// instance is one run of a Deployment's process: the container of its Pod
// on a node (its container ID), or the runner's process (its PID).
type instance struct {
	id       string
	restarts int32
}

// agent returns the running instance of the agent of a managed cluster.
func (f *fleet) agent(t *testing.T, cluster string) instance {
	t.Helper()
	return f.instance(t, cluster, config.AgentNamespace, agentDeployment)
}

// instance waits until Deployment namespace/name on the named cluster runs,
// and returns what runs.
func (f *fleet) instance(t *testing.T, cluster, namespace, name string) instance {
	t.Helper()
	var got instance
	framework.Eventually(t.Context(), t, 2*time.Minute, fmt.Sprintf("Deployment %s/%s running on %s", namespace, name, cluster), func(ctx context.Context) (bool, error) {
		var ok bool
		got, ok = f.running(ctx, cluster, namespace, name)
		return ok, nil
	})
	return got
}

// readyAgain waits until Deployment namespace/name on the named cluster runs
// anew after killed, and its Pod is Ready again, so that its Service sends
// to it.
func (f *fleet) readyAgain(t *testing.T, cluster, namespace, name string, killed instance) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, fmt.Sprintf("Deployment %s/%s on %s running and Ready again", namespace, name, cluster), func(ctx context.Context) (bool, error) {
		now, ok := f.running(ctx, cluster, namespace, name)
		if !ok || now.id == killed.id {
			return false, nil
		}
		if f.runner != nil {
			return true, nil
		}
		pod, err := f.runningPod(ctx, cluster, namespace, name)
		if err != nil || pod == nil {
			return false, err
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// running returns what runs of Deployment namespace/name on the named
// cluster, and false when nothing does.
func (f *fleet) running(ctx context.Context, cluster, namespace, name string) (instance, bool) {
	if f.runner != nil {
		info, ok := f.runner.Process(cluster, namespace, name)
		return instance{id: strconv.Itoa(info.Pid), restarts: int32(info.Restarts)}, ok && info.Pid != 0
	}
	pod, err := f.runningPod(ctx, cluster, namespace, name)
	if err != nil || pod == nil {
		return instance{}, false
	}
	s := pod.Status.ContainerStatuses[0]
	return instance{id: s.ContainerID, restarts: s.RestartCount}, true
}

// runningPod returns the newest Pod of Deployment namespace/name whose
// first container runs, nil when none does.
func (f *fleet) runningPod(ctx context.Context, cluster, namespace, name string) (*corev1.Pod, error) {
	c := f.env.Cluster(cluster).Client()
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		return nil, err
	}
	// The newest, while a rollout replaces an old one.
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil &&
			(newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp)) {
			newest = p
		}
	}
	return newest, nil
}

// kill crashes the running instance of Deployment namespace/name on the
// named cluster (SIGKILL) and returns it.
func (f *fleet) kill(t *testing.T, cluster, namespace, name string) instance {
	t.Helper()
	if f.runner != nil {
		in := f.instance(t, cluster, namespace, name)
		pid, err := strconv.Atoi(in.id)
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		return in
	}
	pod, err := f.runningPod(t.Context(), cluster, namespace, name)
	require.NoError(t, err)
	require.NotNil(t, pod, "Deployment %s/%s on %s runs no Pod", namespace, name, cluster)
	s := pod.Status.ContainerStatuses[0]
	_, err = f.env.Cluster(cluster).KillContainer(t.Context(), namespace, pod.Name, s.Name)
	require.NoError(t, err)
	return instance{id: s.ContainerID, restarts: s.RestartCount}
}
