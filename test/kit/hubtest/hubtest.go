// Package hubtest prepares a hub for the integration tests of the hub
// controllers and the CLI: it installs what `kubectl ocm hub init` installs
// and runs hub controllers in-process as the shipped ocm-hub-controller
// ServiceAccount, with the shipped RBAC and the hub's cache restrictions, so
// a missing permission fails the tests as it would fail in a cluster.
package hubtest

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// Start starts, unless the tests run with -short, a hub named "hub" and
// the managed clusters named for t, installs on the hub what `hub init`
// installs (Install), and returns the environment and a context that ends
// after timeout or with t.
func Start(t *testing.T, timeout time.Duration, clusters ...string) (context.Context, *framework.Environment) {
	t.Helper()
	return StartWith(t, timeout, framework.Options{Clusters: clusters})
}

// StartWith is Start with the settings of opts (API Priority and Fairness,
// no client certificate signing, ...): opts.Clusters names the managed
// clusters, started after the hub "hub", which the other fields may name.
func StartWith(t *testing.T, timeout time.Duration, opts framework.Options) (context.Context, *framework.Environment) {
	t.Helper()
	framework.SkipIfShort(t)
	ctx, env := start(t, timeout, opts)
	Install(ctx, t, env.Cluster("hub").Client(), InstallOptions{Values: config.HubValues{LeaderElection: LeaderElection}})
	return ctx, env
}

// StartRunner is for the tests of the shipped binary and of `hub init`: it
// starts, unless the tests run with -short, the hub "hub" and the managed
// clusters of opts.Clusters (as StartWith, but it installs nothing), runs
// the component runner on every cluster with ocm-controller built from the
// tree with buildFlags, and returns a context that ends after timeout or
// with t, the environment and the runner.
func StartRunner(t *testing.T, timeout time.Duration, opts framework.Options, buildFlags ...string) (context.Context, *framework.Environment, *runner.Runner) {
	t.Helper()
	framework.SkipIfShort(t)
	bin := framework.BuildForTest(t, "./controllers/cmd/ocm-controller", config.ControllerImageName, buildFlags...)
	ctx, env := start(t, timeout, opts)
	r := runner.StartForTest(t, map[string]string{config.ControllerImageName: bin}, env.Clusters()...)
	return ctx, env, r
}

// start starts the hub "hub" and the clusters of opts for t and returns a
// context that ends after timeout or with t.
func start(t *testing.T, timeout time.Duration, opts framework.Options) (context.Context, *framework.Environment) {
	t.Helper()
	opts.Clusters = append([]string{"hub"}, opts.Clusters...)
	env := framework.StartForTestWith(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx, env
}

// LeaderElection are the hub controller's leader election timings in the
// integration tests that install the hub themselves: controller-runtime's
// 15 s, 10 s and 2 s rather than the hub's longer defaults. A hub
// controller stopped while it acquires the Lease can leave it held until
// the lease runs out, and tests that roll the hub controller in quick
// succession would wait out a 60 s lease.
var LeaderElection = config.LeaderElection{Timings: leaderelect.Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}}

// InstallOptions says how Install installs a hub. The zero value installs
// what the ClusterManager operator installs, with the conversion webhook
// in-process.
type InstallOptions struct {
	// Values are the values of the hub objects (config.HubObjects). Install
	// sets ConversionWebhookURL to the webhook it runs, unless
	// NoConversionWebhook is set.
	Values config.HubValues
	// NoClusterManager leaves out the ClusterManager: for hubs whose hub
	// controller the component runner runs from the hub objects alone, and
	// for the tests of the work agent.
	NoClusterManager bool
	// NoConversionWebhook runs no conversion webhook in-process: the hub
	// controller the component runner runs serves it, or the tests read no
	// add-on object (the work agent's).
	NoConversionWebhook bool
	// FieldManager applies the objects; apply's own when empty.
	FieldManager string
}

// Install applies to the hub, as c's user, what the ClusterManager
// operator installs (CRDs, RBAC, admission policies, the hub controller)
// and the ClusterManager, without the operator itself, and runs the hub
// controller's conversion webhook in-process (StartConversionWebhook) at
// the URL the converted CRDs name, so that the add-on API answers at every
// version it serves; opts leave out the ClusterManager or the webhook.
func Install(ctx context.Context, t testing.TB, c client.Client, opts InstallOptions) {
	t.Helper()
	values := opts.Values
	var bind string
	if !opts.NoConversionWebhook {
		bind, values.ConversionWebhookURL = ConversionWebhookAddress(t)
	}
	objs, err := config.HubObjects(values)
	if err != nil {
		t.Fatalf("render hub objects: %v", err)
	}
	if !opts.NoClusterManager {
		operatorObjs, err := config.HubOperatorObjects(config.HubOperatorValues{HubLeaderElection: values.LeaderElection})
		if err != nil {
			t.Fatalf("render the ClusterManager: %v", err)
		}
		for _, u := range operatorObjs {
			if u.GetKind() == "ClusterManager" {
				objs = append(objs, u)
			}
		}
	}
	if err := apply.Apply(ctx, c, objs, apply.Options{FieldManager: opts.FieldManager}); err != nil {
		t.Fatalf("apply hub objects: %v", err)
	}
	if !opts.NoConversionWebhook {
		StartConversionWebhook(ctx, t, c, c, addonconversion.Options{BindAddress: bind})
	}
}

// BootstrapToken returns a bootstrap token of hub (on which Install ran),
// valid for an hour, as `kubectl ocm hub token` prints it.
func BootstrapToken(ctx context.Context, t testing.TB, hub *framework.Cluster) string {
	t.Helper()
	token, err := hub.ServiceAccountToken(ctx, config.OperatorNamespace, identity.BootstrapServiceAccount, time.Hour)
	if err != nil {
		t.Fatalf("bootstrap token of %s: %v", hub.Name, err)
	}
	return token
}

// ConversionWebhookAddress picks a free loopback port for the conversion
// webhook and returns the address to bind and the URL the CRDs name.
func ConversionWebhookAddress(t testing.TB) (bind, url string) {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatalf("find a port for the conversion webhook: %v", err)
	}
	bind = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return bind, "https://" + bind + conversion.Path
}

// StartConversionWebhook runs the hub controller's conversion webhook with
// opts (Namespace defaults to the hub namespace) in-process as c's user until
// the test ends, and waits until the API server converts through it, which
// admin checks for every converted CRD (conversion.ProbeAll).
func StartConversionWebhook(ctx context.Context, t testing.TB, c, admin client.Client, opts addonconversion.Options) *addonconversion.Webhook {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = config.HubNamespace
	}
	w, err := addonconversion.New(c, c, opts, framework.TestLogger(t, "conversion webhook", 0))
	if err != nil {
		t.Fatalf("conversion webhook: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("conversion webhook: %v", err)
		}
	})
	framework.Eventually(ctx, t, time.Minute, "the API server converting add-on objects through the webhook at "+opts.BindAddress, func(ctx context.Context) (bool, error) {
		return true, conversion.ProbeAll(ctx, admin)
	})
	return w
}

// AcceptClusters creates, as c's user, the ManagedClusters names with
// hubAcceptsClient set, and waits until the hub's registration controller
// (run by RunControllers) has accepted each one.
func AcceptClusters(ctx context.Context, t testing.TB, c client.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := c.Create(ctx, mc); err != nil {
			t.Fatalf("create ManagedCluster %s: %v", name, err)
		}
	}
	for _, name := range names {
		framework.Eventually(ctx, t, time.Minute, "cluster "+name+" accepted", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			err := c.Get(ctx, client.ObjectKey{Name: name}, mc)
			return err == nil && mc.IsAccepted(), err
		})
	}
}

// Setup registers controllers with a manager.
type Setup func(ctrl.Manager) error

// RunControllers starts a manager on cluster authenticated as the
// ocm-hub-controller ServiceAccount (Install must have run), registers the
// controllers of setups with it and runs it until the returned stop is
// called or the test ends. logVerbosity sets the controllers' log level in
// the test log. stop waits for the manager to finish and may be called more
// than once; a controller that can be restarted registers the same names
// again, which the manager allows.
func RunControllers(t *testing.T, cluster *framework.Cluster, logVerbosity int, setups ...Setup) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := cluster.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		cancel()
		t.Fatalf("hub controller credentials: %v", err)
	}
	return RunManager(ctx, t, cancel, cfg, manager.Options{Cache: app.HubCacheOptions()}, logVerbosity, "hub controllers", setups...)
}

// RunManager creates a manager for cfg with opts, completed with the
// project's scheme, no metrics or health endpoints, logs through
// framework.TestLogger at logVerbosity and controller names that may be
// registered again, registers setups with it and runs it under ctx until the
// returned stop (which calls cancel, waits for the manager and may be called
// more than once) or the end of the test. what names the manager in failures.
func RunManager(ctx context.Context, t *testing.T, cancel context.CancelFunc, cfg *rest.Config, opts manager.Options, logVerbosity int, what string, setups ...Setup) (stop func()) {
	t.Helper()
	opts.Scheme = apis.Scheme
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.Logger = framework.TestLogger(t, what, logVerbosity)
	opts.Controller = ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		cancel()
		t.Fatalf("create the manager of the %s: %v", what, err)
	}
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			cancel()
			t.Fatalf("set up the %s: %v", what, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	t.Cleanup(stop)
	return stop
}
