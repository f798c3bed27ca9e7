package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	registrationagent "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/agent"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// agentLeaderElectionID names the agent's leader-election Lease in its namespace.
const agentLeaderElectionID = "klusterlet-agent-lock"

// agentOptions are the flags of `ocm-controller agent`.
type agentOptions struct {
	manager      ManagerOptions
	registration registrationagent.Options
}

// NewAgentCommand returns `ocm-controller agent`, which registers a managed
// cluster with its hub and keeps it joined.
func NewAgentCommand() *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the managed-cluster agent (registration, work) against the managed cluster",
		Long: `Run the agent of a managed cluster. It talks to the managed cluster with the
kubeconfig from $KUBECONFIG (or in-cluster), reads the bootstrap kubeconfig from
Secret bootstrap-hub-kubeconfig in its namespace, joins the hub and keeps the
cluster's lease, status and client certificate current. Once the hub credential
exists it applies the cluster's ManifestWorks and reports their status.`,
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
			return o.run(ctrl.SetupSignalHandler())
		},
	}
	o.manager.AddFlags(cmd.Flags(), true)
	r := &o.registration
	fs := cmd.Flags()
	fs.StringVar(&r.ClusterName, "cluster-name", "", "The managed cluster's name on the hub. Default: the Klusterlet's spec.clusterName, else the hub kubeconfig Secret's cluster-name.")
	fs.StringVar(&r.AgentID, "agent-id", "", "The agent ID in the client certificate's identity. Default: the hub kubeconfig Secret's agent-name, else 5 random characters.")
	fs.StringVar(&r.BootstrapKubeconfigSecret, "bootstrap-kubeconfig-secret", operatorv1.BootstrapHubKubeConfigSecret, "Secret in the agent's namespace whose key kubeconfig is the bootstrap kubeconfig.")
	fs.StringVar(&r.HubKubeconfigSecret, "hub-kubeconfig-secret", operatorv1.HubKubeConfigSecret, "Secret in the agent's namespace that holds the hub credential.")
	fs.StringVar(&r.KlusterletName, "klusterlet-name", operatorv1.KlusterletName, "The Klusterlet the agent reports its conditions on.")
	fs.StringSliceVar(&r.SpokeExternalServerURLs, "spoke-external-server-urls", nil, "The managed cluster's API server URLs the hub uses. Default: the Klusterlet's spec.externalServerURLs.")
	fs.Int32Var(&r.ClientCertExpirationSeconds, "client-cert-expiration-seconds", 0, "Requested lifetime of the client certificate in seconds (at least 600); 0 leaves it to the hub's signer.")
	fs.DurationVar(&r.ClusterHealthCheckPeriod, "cluster-healthcheck-period", registrationagent.DefaultClusterHealthCheckPeriod, "How often the cluster's status is reported to the hub.")
	fs.StringVar(&r.ManagedKubeconfigSecret, "managed-kubeconfig-secret", "", "Hosted mode: Secret in the agent's namespace whose key kubeconfig reaches the managed cluster; the agent then runs on a hosting cluster. Empty: the managed cluster is the one the agent runs on.")
	return cmd
}

// run starts the manager with the registration agent until a signal arrives.
func (o *agentOptions) run(ctx context.Context) error {
	cfg, err := o.manager.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := o.manager.NewManager(cfg, agentLeaderElectionID, func(mo *manager.Options) {
		// Secrets are read directly: the agent may only read its own namespace.
		mo.Client.Cache = &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}
		mo.GracefulShutdownTimeout = ptrDuration(10 * time.Second)
	})
	if err != nil {
		return err
	}
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
	work, err := workagent.New(mgr, workagent.Options{
		Namespace:               o.manager.Namespace,
		HubKubeconfigSecret:     o.registration.HubKubeconfigSecret,
		ManagedKubeconfigSecret: o.registration.ManagedKubeconfigSecret,
		ClusterName:             o.registration.ClusterName,
	})
	if err != nil {
		return err
	}
	if err := work.SetupWithManager(mgr); err != nil {
		return err
	}
	ctrl.Log.WithName("agent").Info("Starting the managed-cluster agent", "namespace", o.manager.Namespace, "cluster", o.registration.ClusterName)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the agent: %w", err)
	}
	return nil
}

func ptrDuration(d time.Duration) *time.Duration { return &d }
