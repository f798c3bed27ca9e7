package importcmd

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Options are the flags of `kubectl ocm import`.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter
	// accept is what --accept runs, handed in by the command tree.
	accept AcceptFunc

	// Cluster is the name of the cluster to import.
	Cluster string
	// Kubeconfig and Context select the credential of the cluster.
	Kubeconfig, Context string
	// KeepSecret keeps the import Secret after the import.
	KeepSecret bool
	// Accept accepts the cluster once imported.
	Accept bool
	// Wait waits for the import (and, with Accept, the join).
	Wait bool
	// Timeout bounds the wait.
	Timeout time.Duration
	// DryRun is none, client or server.
	DryRun string
	// Output is the format of a dry run's objects.
	Output string
	// ValuesFile is a file of the klusterlet chart's values that the
	// importer installs the cluster with (Secret cluster-import-config).
	ValuesFile string

	// kubeconfig is what the import Secret holds: the credential of the
	// selected context, certificates embedded; server is its API server.
	kubeconfig []byte
	server     string
	// values is the content of ValuesFile, checked.
	values []byte
}

// NewOptions returns Options for the hub getter selects.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Complete takes the cluster name from the argument, has --accept wait, and
// reads the files of the flags: the credential of --managed-cluster-kubeconfig
// (with the files it names) and --values-file, returning what it cannot read
// as cli.FlagErrors, so that Validate's first mistake is shown with it.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.Cluster = args[0]
	}
	if o.Accept {
		o.Wait = true
	}
	var errs []error
	if o.Kubeconfig != "" {
		errs = append(errs, o.completeKubeconfig())
	}
	if o.ValuesFile != "" {
		errs = append(errs, o.completeValues())
	}
	return cli.FlagErrors(errs...)
}

// completeKubeconfig reads the credential of the selected context of
// --managed-cluster-kubeconfig into kubeconfig and server.
func (o *Options) completeKubeconfig() error {
	kc, err := clientcmd.LoadFromFile(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("read --managed-cluster-kubeconfig %s: %w", o.Kubeconfig, err)
	}
	// Files the kubeconfig names (a CA, a client certificate) are read
	// now, on this machine; the Secret holds their content.
	if err := clientcmdapi.FlattenConfig(kc); err != nil {
		return fmt.Errorf("read the files --managed-cluster-kubeconfig %s names: %w", o.Kubeconfig, err)
	}
	cfg, err := imp.FromKubeconfig(kc, o.Context)
	if err != nil {
		return fmt.Errorf("--managed-cluster-kubeconfig %s: %w", o.Kubeconfig, err)
	}
	if o.kubeconfig, err = imp.Kubeconfig(cfg); err != nil {
		return err
	}
	o.server = cfg.Host
	return nil
}

// completeValues reads --values-file into values, checked for the cluster.
func (o *Options) completeValues() error {
	data, err := os.ReadFile(o.ValuesFile)
	if err != nil {
		return fmt.Errorf("--values-file: %w", err)
	}
	if _, err := valuesfile.ParseImport("--values-file "+o.ValuesFile, data, o.Cluster); err != nil {
		return err
	}
	o.values = data
	return nil
}

// Validate checks the completed flags, stopping at the first mistake, and
// changes nothing.
func (o *Options) Validate() error {
	if err := identity.ValidateClusterName(o.Cluster); err != nil {
		return fmt.Errorf("cluster name: %w", err)
	}
	if o.Kubeconfig == "" {
		return errors.New("--managed-cluster-kubeconfig is required: a kubeconfig of the cluster to import")
	}
	if o.Wait && cli.IsDryRun(o.DryRun) {
		return errors.New("--wait and --accept exclude --dry-run: a dry run imports nothing to wait for")
	}
	if o.Output != "" && !cli.IsDryRun(o.DryRun) {
		return errors.New("-o prints the objects of a dry run: add --dry-run=client")
	}
	return errors.Join(cli.ValidateDryRunMode(o.DryRun), cli.ValidateTimeout(o.Timeout), cli.ValidateOutputFormat(o.Output, []string{"yaml", "json"}))
}
