package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/importer"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// importerLeaderElectionID names the importer's leader election Lease.
const importerLeaderElectionID = "ocm-importer.open-cluster-management.io"

// ImporterOptions are the flags of `ocm-controller importer`.
type ImporterOptions struct {
	ManagerOptions
	importer.Options
}

// NewImporterCommand returns `ocm-controller importer`, the hub's cluster
// importer (feature gate ClusterImporter).
func NewImporterCommand() *cobra.Command {
	o := &ImporterOptions{}
	cmd := &cobra.Command{
		Use:   "importer",
		Short: "Run the hub's cluster importer: install the Klusterlet on clusters whose namespace holds an import Secret",
		Args:  cobra.NoArgs,
		RunE:  runMode(o),
	}
	o.LeaderElectionDefaults = leaderelect.Hub
	o.AddFlags(cmd.Flags(), true)
	cmd.Flags().StringVar(&o.AgentImage, "agent-image", "", "The ocm-controller image imported clusters run (the Klusterlet operator and agent).")
	cmd.Flags().StringVar(&o.HubAPIServer, "hub-apiserver-url", "", "The hub's API server URL as imported clusters reach it. Default: the server of ConfigMap kube-public/cluster-info.")
	cmd.Flags().BoolVar(&o.Guard.AllowLoopback, "allow-loopback-import", false, "Dial clusters at loopback addresses too. Only for a hub whose clusters run on the same host as the importer, as in a test environment.")
	cmd.Flags().StringSliceVar(&o.Renderers, "import-renderers", nil, fmt.Sprintf(
		"What the Klusterlet of an imported cluster is rendered from, in order, each over the earlier ones: %s (the hub's image, API server and pull Secret, a token bound to the cluster), %s (the klusterlet chart's values in Secret %s, key %s, of the cluster's namespace). Default: %s.",
		config.ImportRendererAuto, config.ImportRendererFromConfigSecret, imp.ConfigSecretName, imp.ConfigValuesKey, config.ImportRendererAuto))
	cmd.Flags().DurationVar(&o.RequestTimeout, "import-request-timeout", 30*time.Second, "Time limit of each request to a cluster being imported.")
	return cmd
}

// Validate checks the flags.
func (o *ImporterOptions) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if o.AgentImage == "" {
		return errors.New("--agent-image is required: the image imported clusters run")
	}
	if o.HubAPIServer != "" {
		if u, err := url.Parse(o.HubAPIServer); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--hub-apiserver-url %q is not an https URL", o.HubAPIServer)
		}
	}
	for _, r := range o.Renderers {
		if r != config.ImportRendererAuto && r != config.ImportRendererFromConfigSecret {
			return fmt.Errorf("--import-renderers: %q is not one of %s, %s", r, config.ImportRendererAuto, config.ImportRendererFromConfigSecret)
		}
	}
	if o.RequestTimeout <= 0 {
		return fmt.Errorf("--import-request-timeout %s must be positive", o.RequestTimeout)
	}
	o.Options.Namespace = o.ManagerOptions.Namespace
	return nil
}

// Run starts the importer and blocks until ctx ends.
func (o *ImporterOptions) Run(ctx context.Context) error {
	cfg, err := o.Connect(ctx)
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(cfg, importerLeaderElectionID, func(mo *manager.Options) {
		// The importer may list and watch import Secrets by name only.
		mo.Cache = cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", imp.SecretName)},
		}}
	})
	if err != nil {
		return err
	}
	if err := importer.SetupWithManager(ctx, mgr, o.Options); err != nil {
		return fmt.Errorf("set up the cluster importer: %w", err)
	}
	ctrl.Log.WithName("importer").Info("Starting the cluster importer", "namespace", o.ManagerOptions.Namespace, "agentImage", o.AgentImage, "renderers", o.Renderers)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the cluster importer: %w", err)
	}
	return nil
}
