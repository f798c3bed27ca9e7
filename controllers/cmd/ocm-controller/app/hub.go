package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	addonhub "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement/sigdecision"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub/registrar"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/lease"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/payloadgc"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/propagation"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/replicaset"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/workttl"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// hubLeaderElectionID names the hub controller's leader election Lease.
const hubLeaderElectionID = "ocm-hub-controller.open-cluster-management.io"

// HubOptions are the flags of `ocm-controller hub`.
type HubOptions struct {
	ManagerOptions
	hub.Options
	// Webhook configures the add-on API's conversion webhook.
	Webhook addonconversion.Options
	// FeatureGates is the --feature-gates value; Validate parses it into
	// Options.Features.
	FeatureGates string
	// TLS is the TLS profile of the webhook's server.
	TLS TLSOptions
}

// hubCacheSyncTimeout is how long the hub controller waits for its caches
// to fill before it gives up and exits. controller-runtime's 2 minutes were
// too short on 2 CPUs at 10,000 clusters (test/bench/scale): the hub
// controller, restarted with client-side limits, exited after 2 minutes
// again and again, each start listing the whole fleet anew.
const hubCacheSyncTimeout = 10 * time.Minute

// NewHubCommand returns `ocm-controller hub`, which runs every hub controller
// in one manager until it receives SIGTERM or SIGINT.
func NewHubCommand() *cobra.Command {
	o := &HubOptions{}
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run the hub controllers: registration, cluster health, placement scheduling, ManifestWorkReplicaSets, add-ons",
		Args:  cobra.NoArgs,
		RunE:  runMode(o),
	}
	// Its Lease lives on the hub's API server, which the fleet loads.
	o.LeaderElectionDefaults = leaderelect.Hub
	o.AddFlagsWithLimits(cmd.Flags(), true, HubKubeAPIQPS, DefaultKubeAPIBurst)
	cmd.Flags().StringVar(&o.ClusterManagerName, "cluster-manager-name", operatorv1.ClusterManagerName, "The ClusterManager the controller reports on and reads autoApproveUsers from.")
	cmd.Flags().Float64Var(&o.LeaseGraceRatio, "lease-grace-ratio", lease.DefaultGraceRatio, "A cluster's availability becomes Unknown this many lease periods after its agent's last lease renewal.")
	cmd.Flags().StringVar(&o.Webhook.BindAddress, "webhook-bind-address", ":"+strconv.Itoa(conversion.Port), "Address the add-on API's conversion webhook ("+conversion.Path+") binds to.")
	cmd.Flags().StringSliceVar(&o.Webhook.Hosts, "webhook-hosts", nil, "DNS names or IP addresses the conversion webhook's serving certificate holds besides those of its Service, such as the host of `hub init --conversion-webhook-url`.")
	cmd.Flags().StringVar(&o.FeatureGates, "feature-gates", "", featuregate.Usage(featuregate.Hub))
	o.TLS.AddFlags(cmd.Flags(), "the conversion webhook (--webhook-bind-address)", "whose changes reach new connections without a restart")
	cmd.Flags().StringSliceVar(&o.AutoApprovedCSRUsers, "auto-approved-csr-users", nil, "Bootstrap identities whose first-join CSRs are approved automatically, merged with the ClusterManager's spec.registrationConfiguration.autoApproveUsers.")
	return cmd
}

// Validate checks the flags.
func (o *HubOptions) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if o.LeaseGraceRatio < lease.MinGraceRatio {
		return fmt.Errorf("--lease-grace-ratio %v must be at least %v: agents renew once per lease period plus up to 10 %% jitter, and a smaller ratio marks clusters Unknown between two timely renewals", o.LeaseGraceRatio, lease.MinGraceRatio)
	}
	if err := o.TLS.Validate(); err != nil {
		return err
	}
	if o.ClusterManagerName == "" {
		return errors.New("--cluster-manager-name must not be empty")
	}
	features, err := featuregate.Parse(featuregate.Hub, o.FeatureGates)
	if err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	o.Features = &features
	if o.Namespace == "" {
		return errors.New("the conversion webhook keeps its certificate in the controller's namespace: set $" + PodNamespaceEnv + " or --namespace")
	}
	return nil
}

// setupControllers adds the hub's controllers to mgr: registration,
// placement, works and, with their feature gates, ManifestWorkReplicaSets
// and the add-on manager.
func (o *HubOptions) setupControllers(mgr manager.Manager) error {
	if err := hub.SetupWithManager(mgr, o.Options); err != nil {
		return err
	}
	if err := placement.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the placement scheduler: %w", err)
	}
	if err := sigdecision.Setup(mgr, o.Features.Enabled(featuregate.SIGPlacementDecision)); err != nil {
		return err
	}
	if o.Features.Enabled(featuregate.ManifestWorkReplicaSet) {
		if err := replicaset.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up the ManifestWorkReplicaSet controller: %w", err)
		}
	}
	if err := workttl.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the ManifestWork TTL controller: %w", err)
	}
	if err := payloadgc.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the ManifestChunk collector: %w", err)
	}
	if _, err := propagation.SetupWithManager(mgr); err != nil {
		return err
	}
	if o.Features.Enabled(featuregate.AddonManagement) {
		if err := addonhub.SetupWithManager(mgr, addonhub.Options{Namespace: o.Namespace}); err != nil {
			return fmt.Errorf("set up the add-on manager: %w", err)
		}
	}
	return nil
}

// Run starts the manager with the hub controllers and blocks until ctx ends.
func (o *HubOptions) Run(ctx context.Context) error {
	cfg, err := o.Connect(ctx)
	if err != nil {
		return err
	}
	o.Webhook.Namespace = o.Namespace
	// The TLS profile applies to each new connection, so a change of the
	// ConfigMap takes effect without restarting the hub controller, which
	// would hand leadership over.
	profile, profileWatcher, err := o.TLS.Load(ctx, cfg, o.Namespace, servesECDSA("the conversion webhook"), ctrl.Log.WithName("tls-profile"))
	if err != nil {
		return err
	}
	o.Webhook.TLSOpts = append(o.Webhook.TLSOpts, profile.ServerOption())
	webhook, err := addonconversion.New(nil, nil, o.Webhook, ctrl.Log.WithName("conversion-webhook"))
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(cfg, hubLeaderElectionID, func(mo *manager.Options) {
		mo.Cache = HubCacheOptions()
		mo.WebhookServer = webhook.Server
		mo.Controller.CacheSyncTimeout = hubCacheSyncTimeout
	})
	if err != nil {
		return err
	}
	if err := webhook.SetupWithManager(mgr); err != nil {
		return err
	}
	if profileWatcher != nil {
		profileWatcher.Recorder = mgr.GetEventRecorder("tls-profile")
		if err := mgr.Add(profileWatcher); err != nil {
			return fmt.Errorf("add the TLS profile's watcher: %w", err)
		}
	}
	// The hub tunnel runs in a Deployment of its own (`ocm-controller
	// tunnel`); the hub controller keeps its certificate and registers its
	// API, which its own ServiceAccount may not.
	if err := mgr.Add(&registrar.Registrar{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: o.Namespace, Log: ctrl.Log.WithName("hub-tunnel-registrar"),
	}); err != nil {
		return fmt.Errorf("add the hub tunnel's registrar: %w", err)
	}
	migrator, err := addonconversion.NewMigrator(mgr, ctrl.Log.WithName("stored-version-migration"))
	if err != nil {
		return err
	}
	if err := mgr.Add(migrator); err != nil {
		return fmt.Errorf("add the stored-version migration of the add-on API: %w", err)
	}
	if err := o.setupControllers(mgr); err != nil {
		return err
	}
	ctrl.Log.WithName("hub").Info("Starting hub controllers", "namespace", o.Namespace, "leaderElect", o.LeaderElect, "featureGates", o.FeatureGates)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run hub controllers: %w", err)
	}
	return nil
}
