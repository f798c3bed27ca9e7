package app

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// PodNamespaceEnv is the environment variable the shipped Deployments fill
// from the Pod's namespace (a fieldRef); --namespace overrides it.
const PodNamespaceEnv = "POD_NAMESPACE"

// ManagerOptions are the flags every ocm-controller mode shares: where the
// manager serves metrics and probes, leader election, its namespace and the
// kubeconfig it talks to.
type ManagerOptions struct {
	// MetricsBindAddress is where /metrics is served; "0" disables it.
	MetricsBindAddress string
	// HealthProbeBindAddress is where /healthz and /readyz are served; "0"
	// disables them.
	HealthProbeBindAddress string
	// LeaderElect turns leader election on; the lock is a Lease in Namespace.
	LeaderElect bool
	// LeaseDuration is how long a standby waits after the last renewal it
	// saw before it takes the Lease; RenewDeadline is how long the leader
	// keeps trying to renew before it gives up leadership; RetryPeriod is the
	// interval between attempts. They bound the time a standby takes over
	// after the leader dies.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// LeaderElectionDefaults are the mode's defaults of the three timings,
	// set before AddFlags: leaderelect.Hub for the hub's controllers, none
	// (leaderelect.Managed) for the managed cluster's.
	LeaderElectionDefaults leaderelect.Timings
	// Namespace is the controller's own namespace (default: $POD_NAMESPACE).
	Namespace string
	// Kubeconfig is an explicit kubeconfig file; empty means $KUBECONFIG, the
	// in-cluster configuration or ~/.kube/config, as controller-runtime reads it.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst are the manager's client-side rate limits
	// towards the cluster it runs against; a KubeAPIQPS of 0 sets none.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// Profiling serves Go's runtime profiles under /debug/pprof/ on the
	// metrics address.
	Profiling bool

	zap zap.Options
}

// The default client-side rate limits of the managers: a hub controller
// writes several objects per managed cluster and add-on, and
// controller-runtime's defaults (20 per second, bursts of 30) would make it
// fall behind a fleet of hundreds. The API server's priority and fairness
// still bounds what it serves.
const (
	DefaultKubeAPIQPS   = 50
	DefaultKubeAPIBurst = 100
)

// HubKubeAPIQPS is the hub controller's default --kube-api-qps: no
// client-side limit. A rollout writes one ManifestWork per cluster, and at
// 50 requests per second a rollout to 10,000 clusters took 200 s on the
// client's limit alone while the API server had room (test/bench/scale).
// The hub's API server bounds the hub controller instead, with the
// priority level of FlowSchema ocm-hub-controller (config/hub), which
// neither the agents nor other clients share.
const HubKubeAPIQPS = 0

// AddFlags registers the shared flags on fs. leaderElect is the mode's
// default for --leader-elect.
func (o *ManagerOptions) AddFlags(fs *pflag.FlagSet, leaderElect bool) {
	o.AddFlagsWithLimits(fs, leaderElect, DefaultKubeAPIQPS, DefaultKubeAPIBurst)
}

// AddFlagsWithLimits is AddFlags with the mode's defaults of --kube-api-qps
// (0: no client-side limit) and --kube-api-burst.
func (o *ManagerOptions) AddFlagsWithLimits(fs *pflag.FlagSet, leaderElect bool, qps float32, burst int) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", `Address the Prometheus /metrics endpoint binds to; "0" disables it.`)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `Address the /healthz and /readyz endpoints bind to; "0" disables them.`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", leaderElect, "Elect a leader through a Lease in the controller's namespace, so that only one replica acts.")
	le := o.leaderElectionDefaults()
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", le.LeaseDuration, "How long a standby replica waits after the leader's last renewal before it takes over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", le.RenewDeadline, "How long the leader keeps trying to renew its Lease before it stops acting; shorter than --leader-elect-lease-duration.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", le.RetryPeriod, "How often the replicas try to acquire or renew the Lease; shorter than --leader-elect-renew-deadline.")
	fs.StringVar(&o.Namespace, "namespace", "", "The controller's own namespace (leader election, secrets). Default: $"+PodNamespaceEnv+".")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Default: $KUBECONFIG, the in-cluster configuration, then ~/.kube/config.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", qps, "Requests per second of the manager to the cluster it runs against; 0 sets no client-side limit, leaving the API server's priority and fairness as the limit.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", burst, "Request burst of the manager to the cluster it runs against; unused when --kube-api-qps is 0.")
	fs.BoolVar(&o.Profiling, "profiling", false, "Serve Go's runtime profiles (CPU, heap, goroutines) under /debug/pprof/ on --metrics-bind-address, as Kubernetes' components do with --profiling. Whoever reaches that address may read them.")
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.zap.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
}

// Complete fills Namespace from the environment and installs the logger.
func (o *ManagerOptions) Complete() error {
	if o.Namespace == "" {
		o.Namespace = os.Getenv(PodNamespaceEnv)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	return nil
}

// The garbage collector's target percentages of the processes of a managed
// cluster, unless $GOGC sets one. Both live on a few MiB of heap and
// allocate little once settled, so at Go's default of 100 the collector's
// headroom is most of their heap (see test/bench/README.md). The agent
// collects at +50 %, a CPU cost that only shows while many works change at
// once; the Klusterlet operator, which allocates only when a Klusterlet or
// the agent's Deployment changes, at +25 %.
const (
	agentGCPercent              = 50
	klusterletOperatorGCPercent = 25
)

// defaultGCPercent sets the garbage collector's target percentage unless
// $GOGC sets it.
func defaultGCPercent(percent int) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
}

// Validate checks the shared flags.
func (o *ManagerOptions) Validate() error {
	if o.LeaderElect && o.Namespace == "" {
		return errors.New("leader election needs the controller's namespace: set $" + PodNamespaceEnv + " or --namespace, or pass --leader-elect=false")
	}
	if err := leaderelect.Validate(o.leaderElectionTimings(), o.leaderElectionDefaults(), leaderelect.FlagNames); err != nil {
		return err
	}
	if o.KubeAPIQPS < 0 {
		return fmt.Errorf("--kube-api-qps %v must not be negative (0 sets no client-side limit)", o.KubeAPIQPS)
	}
	if o.KubeAPIQPS > 0 && o.KubeAPIBurst <= 0 {
		return fmt.Errorf("--kube-api-burst %d must be positive with --kube-api-qps %v", o.KubeAPIBurst, o.KubeAPIQPS)
	}
	return nil
}

// leaderElectionTimings returns the lease duration, renew deadline and retry
// period, each defaulted when unset.
func (o *ManagerOptions) leaderElectionTimings() leaderelect.Timings {
	return leaderelect.Timings{LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod}.Or(o.leaderElectionDefaults())
}

// leaderElectionDefaults returns the mode's default timings.
func (o *ManagerOptions) leaderElectionDefaults() leaderelect.Timings {
	return o.LeaderElectionDefaults.Or(leaderelect.Managed)
}

// RESTConfig returns the client configuration the manager uses,
// with --kube-api-qps and --kube-api-burst (no limiter when the QPS is 0).
func (o *ManagerOptions) RESTConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("load --kubeconfig %s: %w", o.Kubeconfig, err)
		}
	} else if cfg, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	if o.KubeAPIQPS == 0 {
		// client-go: a negative QPS builds no rate limiter (0 would mean
		// its default of 5).
		cfg.QPS, cfg.Burst = -1, 0
	}
	return cfg, nil
}

// Leader election: the Lease and the events recorded on it, in the
// controller's own namespace (config.Render fills it in).
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace="{{ .Namespace }}",resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=events,verbs=create;patch

// profilingHandlers returns the handlers of Go's runtime profiles when
// --profiling is set, nil otherwise.
func (o *ManagerOptions) profilingHandlers() map[string]http.Handler {
	if !o.Profiling {
		return nil
	}
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// NewManager returns a manager with the shared settings: the project's
// scheme, metrics, health and readiness checks, and leader election under
// leaderElectionID. customize may adjust the options (for example the cache)
// before the manager is built.
func (o *ManagerOptions) NewManager(cfg *rest.Config, leaderElectionID string, customize func(*manager.Options)) (manager.Manager, error) {
	t := o.leaderElectionTimings()
	opts := manager.Options{
		Scheme:                  apis.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsBindAddress, ExtraHandlers: o.profilingHandlers()},
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.Namespace,
		LeaseDuration:           &t.LeaseDuration,
		RenewDeadline:           &t.RenewDeadline,
		RetryPeriod:             &t.RetryPeriod,
		// Give the lock up on shutdown so a restarted replica takes over at once.
		LeaderElectionReleaseOnCancel: true,
	}
	if customize != nil {
		customize(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	return mgr, nil
}
