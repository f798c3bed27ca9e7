package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/operator/klusterlet"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// klusterletOperatorLeaderElectionID names the Klusterlet operator's
// leader-election Lease in its namespace.
const klusterletOperatorLeaderElectionID = "klusterlet-operator-lock"

// NewKlusterletOperatorCommand returns `ocm-controller operator klusterlet`,
// which installs and keeps the agent of every Klusterlet.
func NewKlusterletOperatorCommand() *cobra.Command {
	var o ManagerOptions
	var enforceShared bool
	cmd := &cobra.Command{
		Use:   "klusterlet",
		Short: "Run the Klusterlet operator: install the agent of every Klusterlet and report its status",
		Long: `Run the Klusterlet operator. For every Klusterlet it renders the agent from
the templates embedded in ocm-controller, applies it (field manager klusterlet),
deletes what it applied before and no longer renders, and writes the
Klusterlet's Applied, ReadyToApply, Available, Progressing,
RegistrationDesiredDegraded and WorkDesiredDegraded conditions from what runs.
Deleting a Klusterlet removes its agent as 'kubectl ocm unjoin' does.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			defaultGCPercent(klusterletOperatorGCPercent)
			return runKlusterletOperator(ctrl.SetupSignalHandler(), &o, enforceShared)
		},
	}
	o.AddFlags(cmd.Flags(), true)
	cmd.Flags().BoolVar(&enforceShared, podsecurity.SharedEnforceFlag, false,
		"Make the add-on agents' namespace open-cluster-management-agent-addon, which OCM's add-ons share, enforce restricted Pod Security; without it the namespace warns and audits at restricted only.")
	return cmd
}

// runKlusterletOperator runs the operator until a signal arrives.
func runKlusterletOperator(ctx context.Context, o *ManagerOptions, enforceShared bool) error {
	cfg, err := o.Connect(ctx)
	if err != nil {
		return err
	}
	owned, err := labels.Parse(klusterlet.CacheSelector())
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(cfg, klusterletOperatorLeaderElectionID, func(mo *manager.Options) {
		// The cache holds Klusterlets, the Deployments the operator
		// rendered and, for the TLS profile and the image pull Secret, the
		// ConfigMaps ocm-tls-profile, the Secrets
		// open-cluster-management-image-pull-credentials and the add-on
		// namespaces, nothing else: the operator reads everything else
		// directly.
		mo.Cache.ByObject = map[client.Object]cache.ByObject{&appsv1.Deployment{}: {Label: owned}}
		klusterlet.AddonCache(mo.Cache.ByObject)
		mo.GracefulShutdownTimeout = ptr.To(10 * time.Second)
	})
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{Scheme: apis.Scheme, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("create the operator's client: %w", err)
	}
	r := &klusterlet.Reconciler{Client: mgr.GetClient(), Direct: direct, Namespace: o.Namespace, EnforceSharedPodSecurity: enforceShared}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if o.Namespace != "" {
		copier := &klusterlet.AddonCopyReconciler{Client: mgr.GetClient(), Namespace: o.Namespace}
		if err := copier.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	ctrl.Log.WithName("klusterlet-operator").Info("Starting the Klusterlet operator", "namespace", o.Namespace)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the Klusterlet operator: %w", err)
	}
	return nil
}
