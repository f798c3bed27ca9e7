package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/operator/clustermanager"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// operatorHubLeaderElectionID names the ClusterManager operator's leader
// election Lease.
const operatorHubLeaderElectionID = "cluster-manager.operator.open-cluster-management.io"

// OperatorHubOptions are the flags of `ocm-controller operator hub`.
type OperatorHubOptions struct {
	ManagerOptions
	// ClusterManagerName is the ClusterManager the operator acts on.
	ClusterManagerName string
	// ConversionWebhookURL is passed into the hub it renders.
	ConversionWebhookURL string
}

// NewOperatorHubCommand returns `ocm-controller operator hub`, the
// ClusterManager operator, which runs until it receives SIGTERM or SIGINT.
func NewOperatorHubCommand() *cobra.Command {
	o := &OperatorHubOptions{}
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Install the hub as the ClusterManager says, keep it so and report its state",
		Args:  cobra.NoArgs,
		RunE:  runMode(o),
	}
	// Its Lease lives on the hub's API server, which the fleet loads.
	o.LeaderElectionDefaults = leaderelect.Hub
	o.AddFlags(cmd.Flags(), true)
	cmd.Flags().StringVar(&o.ClusterManagerName, "cluster-manager-name", operatorv1.ClusterManagerName, "The ClusterManager the operator installs the hub from.")
	cmd.Flags().StringVar(&o.ConversionWebhookURL, "conversion-webhook-url", "",
		"The https://<host>:<port>/convert URL at which the API server calls the add-on conversion webhook, for hubs whose API server cannot reach Services.")
	return cmd
}

// Validate checks the flags.
func (o *OperatorHubOptions) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if o.ClusterManagerName == "" {
		return errors.New("--cluster-manager-name must not be empty")
	}
	if err := config.ValidateConversionWebhookURL(o.ConversionWebhookURL); err != nil {
		return fmt.Errorf("--conversion-webhook-url: %w", err)
	}
	return nil
}

// Run starts the operator and blocks until ctx ends.
func (o *OperatorHubOptions) Run(ctx context.Context) error {
	cfg, err := o.Connect(ctx)
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(cfg, operatorHubLeaderElectionID, func(mo *manager.Options) {
		mo.Cache = clustermanager.CacheOptions(o.Namespace)
	})
	if err != nil {
		return err
	}
	writer, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("create the operator's client: %w", err)
	}
	r := &clustermanager.Reconciler{Client: mgr.GetClient(), Writer: writer, Name: o.ClusterManagerName, ConversionWebhookURL: o.ConversionWebhookURL, Namespace: o.Namespace}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the ClusterManager operator: %w", err)
	}
	ctrl.Log.WithName("operator").Info("Starting the ClusterManager operator", "clusterManager", o.ClusterManagerName)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the ClusterManager operator: %w", err)
	}
	return nil
}
