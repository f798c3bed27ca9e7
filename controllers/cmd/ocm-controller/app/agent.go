package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	addonlease "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/lease"
	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	registrationagent "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/agent"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig/managedcluster"
)

// agentLeaderElectionID names the agent's leader-election Lease in its namespace.
const agentLeaderElectionID = "klusterlet-agent-lock"

// agentOptions are the flags of `ocm-controller agent`.
type agentOptions struct {
	manager      ManagerOptions
	registration registrationagent.Options
	// work holds the work agent's own flags; the rest of its options come
	// from registration's.
	work workagent.Options
	// featureGates is --feature-gates, parsed in RunE.
	featureGates string
	features     featuregate.Set
	// addon holds the add-on agent's own flags; the rest of its options come
	// from registration's.
	addon addonagent.Options
	// tls is the TLS profile, read at start: the hub tunnel dials the hub
	// with it. The agent serves no TLS (its metrics and probes are plain
	// HTTP, the tunnel's forwarder listens in memory), and its clients of
	// the API servers are client-go's, which sets no TLS version or suite
	// of its own choice: those follow the API servers' settings. It takes
	// the flags OCM's Klusterlet deployments pass, so that a bad profile
	// shows where it was set.
	tls TLSOptions
}

// NewAgentCommand returns `ocm-controller agent`, which registers a managed
// cluster with its hub and keeps it joined.
func NewAgentCommand() *cobra.Command {
	return newAgentCommand(&agentOptions{})
}

// newAgentCommand returns `ocm-controller agent` with its flags bound to o.
func newAgentCommand(o *agentOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the managed-cluster agent (registration, work, add-ons) against the managed cluster",
		Long: `Run the agent of a managed cluster. It talks to the managed cluster with the
kubeconfig from $KUBECONFIG (or in-cluster), reads the bootstrap kubeconfig from
Secret bootstrap-hub-kubeconfig in its namespace, joins the hub and keeps the
cluster's lease, status and client certificate current. Once the hub credential
exists it applies the cluster's ManifestWorks and reports their status, and
serves the cluster's add-ons: their hub credentials and their lease health.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.manager.Complete(); err != nil {
				return err
			}
			o.registration.Namespace = o.manager.Namespace
			o.registration.Default()
			if err := o.manager.Validate(); err != nil {
				return err
			}
			if err := o.registration.Validate(); err != nil {
				return err
			}
			if err := o.tls.Validate(); err != nil {
				return err
			}
			if err := o.validateWorkers(); err != nil {
				return err
			}
			features, err := featuregate.Parse(featuregate.Agent, o.featureGates)
			if err != nil {
				return fmt.Errorf("--feature-gates: %w", err)
			}
			o.features = features
			o.registration.DisableClusterClaims = !features.Enabled(featuregate.ClusterClaim)
			defaultGCPercent(agentGCPercent)
			return o.run(ctrl.SetupSignalHandler())
		},
	}
	o.manager.AddFlags(cmd.Flags(), true)
	r := &o.registration
	fs := cmd.Flags()
	fs.StringVar(&r.ClusterName, "cluster-name", "", "The managed cluster's name on the hub. Default: the Klusterlet's spec.clusterName, else the hub kubeconfig Secret's cluster-name.")
	fs.StringVar(&r.AgentID, "agent-id", "", "The agent ID in the client certificate's identity. Default: the hub kubeconfig Secret's agent-name, else 5 random characters.")
	fs.StringSliceVar(&r.BootstrapKubeconfigSecrets, "bootstrap-kubeconfig-secret", []string{operatorv1.BootstrapHubKubeConfigSecret}, "Secret in the agent's namespace holding the bootstrap kubeconfig (key kubeconfig); repeat it for standby hubs, in order of preference.")
	fs.DurationVar(&r.HubConnectionTimeout, "hub-connection-timeout", registrationagent.DefaultHubConnectionTimeout, "With standby hubs: how long the hub may go without renewing the cluster's lease before the agent registers with the next hub.")
	fs.StringVar(&r.HubKubeconfigSecret, "hub-kubeconfig-secret", operatorv1.HubKubeConfigSecret, "Secret in the agent's namespace that holds the hub credential.")
	fs.StringVar(&r.KlusterletName, "klusterlet-name", operatorv1.KlusterletName, "The Klusterlet the agent reports its conditions on.")
	fs.StringSliceVar(&r.SpokeExternalServerURLs, "spoke-external-server-urls", nil, "The managed cluster's API server URLs the hub uses. Default: the Klusterlet's spec.externalServerURLs.")
	fs.StringVar(&r.RegistrationAuth, "registration-auth", operatorv1.CSRAuthType, "How the agent authenticates to the hub: csr (client certificates the hub signs) or token (ServiceAccount tokens, for hubs that sign none).")
	fs.Int32Var(&r.ClientCertExpirationSeconds, "client-cert-expiration-seconds", 0, "Requested lifetime of the client certificate in seconds (at least 3600); 0 leaves it to the hub's signer.")
	fs.DurationVar(&r.ClusterHealthCheckPeriod, "cluster-healthcheck-period", registrationagent.DefaultClusterHealthCheckPeriod, "How often the cluster's status is reported to the hub. The Klusterlet operator sets it from spec.registrationConfiguration.clusterHealthCheckPeriod.")
	fs.StringVar(&r.ManagedKubeconfigSecret, "managed-kubeconfig-secret", "", "Hosted mode: Secret in the agent's namespace whose key kubeconfig reaches the managed cluster; the agent then runs on a hosting cluster. Empty: the managed cluster is the one the agent runs on.")
	w := &o.work
	fs.DurationVar(&w.EvictionGracePeriod, "appliedmanifestwork-eviction-grace-period", workagent.DefaultEvictionGracePeriod, "How long an AppliedManifestWork whose ManifestWork is gone is kept before it and its objects are deleted; 100 years or more never evicts.")
	fs.DurationVar(&w.StatusSyncInterval, "status-sync-interval", workagent.DefaultStatusSyncInterval, "How often works with Poll feedback rules are read again, besides the watches of the applied objects. The Klusterlet operator sets it from spec.workConfiguration.statusSyncInterval.")
	fs.StringVar(&w.PayloadCacheDir, "payload-cache-dir", "", "Directory where the work agent keeps the verified chunks of large payloads, at most 512 MiB, those no work lists removed first (the agent's Deployment mounts an emptyDir there). Empty: a new directory under $TMPDIR, removed when the agent stops.")
	fs.IntVar(&w.Workers, "manifestwork-agent-workers", workagent.DefaultWorkers, "How many ManifestWorks the work agent reconciles at once (applies, reports the status of, finalizes once deleted); at least 1. The Klusterlet operator sets it from spec.workConfiguration.workers.manifestWorks.")
	fs.IntVar(&w.AppliedWorkWorkers, "appliedmanifestwork-finalize-controller-workers", workagent.DefaultAppliedWorkWorkers, "How many AppliedManifestWorks the work agent finalizes (deletes their objects) or evicts at once; at least 1. The Klusterlet operator sets it from spec.workConfiguration.workers.appliedManifestWorkFinalize.")
	fs.Float32Var(&w.HubQPS, "hub-kube-api-qps", workagent.DefaultHubQPS, "Requests per second of the work agent to the hub. The Klusterlet operator sets it from spec.workConfiguration.hubKubeAPIQPS.")
	fs.IntVar(&w.HubBurst, "hub-kube-api-burst", workagent.DefaultHubBurst, "Request burst of the work agent to the hub. The Klusterlet operator sets it from spec.workConfiguration.hubKubeAPIBurst.")
	fs.Float32Var(&w.KubeQPS, "work-kube-api-qps", workagent.DefaultKubeQPS, "Requests per second of the work agent to the managed cluster (--kube-api-qps limits the rest of the agent). The Klusterlet operator sets it from spec.workConfiguration.kubeAPIQPS.")
	fs.IntVar(&w.KubeBurst, "work-kube-api-burst", workagent.DefaultKubeBurst, "Request burst of the work agent to the managed cluster (--kube-api-burst limits the rest of the agent). The Klusterlet operator sets it from spec.workConfiguration.kubeAPIBurst.")
	o.tls.AddFlags(fs, "the hub tunnel's connection to the hub (the agent serves no TLS: metrics and probes are plain HTTP)", "read at start")
	fs.StringVar(&o.featureGates, "feature-gates", "", featuregate.Usage(featuregate.Agent)+" The Klusterlet operator sets it from the featureGates of spec.registrationConfiguration and spec.workConfiguration.")
	fs.StringVar(&o.addon.KubeClientDriver, "addon-kubeclient-registration-auth", addonv1alpha1.KubeClientDriverCSR, "How add-on agents get their hub credential: csr (client certificates) or token (ServiceAccount tokens). Default: the Klusterlet's choice, else csr.")
	fs.Int64Var(&o.addon.TokenExpirationSeconds, "addon-token-expiration-seconds", addonagent.DefaultTokenExpirationSeconds, "Requested lifetime in seconds (at least 600) of the add-on tokens of --addon-kubeclient-registration-auth token; they are refreshed after 80 % of it.")
	fs.Float64Var(&o.addon.LeaseGraceRatio, "addon-lease-grace-ratio", addonlease.DefaultGraceRatio, "An add-on in Lease mode becomes unavailable this many lease durations (the Lease's leaseDurationSeconds, else 60 s) after its agent's last renewal.")
	return cmd
}

// validateWorkers refuses worker counts below 1, which the work agent
// would otherwise replace with its defaults.
func (o *agentOptions) validateWorkers() error {
	for _, f := range []struct {
		flag   string
		n, def int
	}{
		{"--manifestwork-agent-workers", o.work.Workers, workagent.DefaultWorkers},
		{"--appliedmanifestwork-finalize-controller-workers", o.work.AppliedWorkWorkers, workagent.DefaultAppliedWorkWorkers},
	} {
		if f.n < 1 {
			return fmt.Errorf("%s %d must be at least 1 (default %d)", f.flag, f.n, f.def)
		}
	}
	return nil
}

// run starts the manager with the registration agent until a signal arrives.
func (o *agentOptions) run(ctx context.Context) error {
	withoutWatchList()
	cfg, err := o.manager.Connect(ctx)
	if err != nil {
		return err
	}
	profile, _, err := o.tls.Load(ctx, cfg, o.manager.Namespace, nil, ctrl.Log.WithName("tls-profile"))
	if err != nil {
		return err
	}
	mgr, err := o.manager.NewManager(cfg, agentLeaderElectionID, func(mo *manager.Options) {
		// Secrets are read directly: the agent may only read its own namespace.
		mo.Client.Cache = &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}
		// The cache keeps only what the agents read (in Default mode the
		// managed cluster's Nodes are in it too).
		managedcluster.TrimCache(&mo.Cache)
		mo.GracefulShutdownTimeout = ptr.To(10 * time.Second)
	})
	if err != nil {
		return err
	}
	// Both agents share one client and one cache of the managed cluster:
	// the manager's own in Default mode, one built from the kubeconfig
	// Secret in Hosted mode.
	managed, err := managedcluster.Cluster(mgr, types.NamespacedName{Namespace: o.manager.Namespace, Name: o.registration.ManagedKubeconfigSecret})
	if err != nil {
		return err
	}
	o.registration.ManagedCluster = managed
	o.work.ManagedCluster = managed
	agent, err := registrationagent.New(mgr, o.registration)
	if err != nil {
		return err
	}
	if err := agent.SetupWithManager(mgr); err != nil {
		return err
	}
	// The work agent meets registration only through the hub credential
	// Secret; in Hosted mode it reaches the managed cluster through the same
	// kubeconfig Secret as registration.
	workOpts := o.work
	workOpts.Namespace = o.manager.Namespace
	workOpts.HubKubeconfigSecret = o.registration.HubKubeconfigSecret
	workOpts.ManagedKubeconfigSecret = o.registration.ManagedKubeconfigSecret
	workOpts.ManagedCluster = o.registration.ManagedCluster
	workOpts.ClusterName = o.registration.ClusterName
	workOpts.ApplyLatency = o.features.Enabled(featuregate.ManifestWorkApplyLatency)
	work, err := workagent.New(mgr, workOpts)
	if err != nil {
		return err
	}
	if err := work.SetupWithManager(mgr); err != nil {
		return err
	}
	if o.features.Enabled(featuregate.AddonManagement) {
		if err := o.setupAddons(mgr); err != nil {
			return err
		}
	}
	if o.features.Enabled(featuregate.HubTunnel) {
		tunnel, err := proxyagent.New(proxyagent.Options{
			Config: mgr.GetConfig(), Managed: managed.GetConfig(),
			Namespace: o.manager.Namespace, HubKubeconfigSecret: o.registration.HubKubeconfigSecret,
			ClusterName: o.registration.ClusterName, TLS: profile.Profile(),
		}, ctrl.Log.WithName("hub-tunnel"))
		if err != nil {
			return err
		}
		if err := mgr.Add(tunnel); err != nil {
			return fmt.Errorf("add the hub tunnel: %w", err)
		}
	}
	ctrl.Log.WithName("agent").Info("Starting the managed-cluster agent", "namespace", o.manager.Namespace, "cluster", o.registration.ClusterName, "featureGates", o.featureGates)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the agent: %w", err)
	}
	return nil
}

// setupAddons registers the add-on agent (feature AddonManagement).
func (o *agentOptions) setupAddons(mgr manager.Manager) error {
	// The add-on agent, like the work agent, meets registration only
	// through the hub credential Secret.
	addonOpts := o.addon
	addonOpts.Namespace = o.manager.Namespace
	addonOpts.HubKubeconfigSecret = o.registration.HubKubeconfigSecret
	addonOpts.ManagedCluster = o.registration.ManagedCluster
	addonOpts.ClusterName = o.registration.ClusterName
	addons, err := addonagent.New(mgr, addonOpts)
	if err != nil {
		return err
	}
	return addons.SetupWithManager(mgr)
}

// withoutWatchList turns client-go's WatchListClient off in this process,
// so that the agent's informers list, then watch. After a refused
// connection, client-go's watch-list path backs off without watching its
// context: on a hub that is gone, each informer of the hub took up to its
// back-off (30 s) to stop, and the agent's move to a standby hub, and the
// work agent's reconnection after it, waited on them. The list-then-watch
// path stops at once. The agent's caches are small (its own cluster
// namespace, the objects it applied), so the stream saves little.
func withoutWatchList() {
	clientfeatures.ReplaceFeatureGates(gatesWithout{Gates: clientfeatures.FeatureGates(), off: clientfeatures.WatchListClient})
}

// gatesWithout is client-go's feature gates with one gate off.
type gatesWithout struct {
	clientfeatures.Gates
	off clientfeatures.Feature
}

func (g gatesWithout) Enabled(key clientfeatures.Feature) bool {
	return key != g.off && g.Gates.Enabled(key)
}
