package get

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ClustersOptions are the flags of `kubectl ocm get clusters`.
type ClustersOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name, wide (and kubectl's other
	// machine formats); empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
	// ClusterSet restricts the list to one ManagedClusterSet.
	ClusterSet string
	// Names restricts the list to these clusters.
	Names []string
}

// NewClustersOptions returns ClustersOptions for the hub getter selects.
func NewClustersOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *ClustersOptions {
	return &ClustersOptions{
		IOStreams:  streams,
		getter:     getter,
		PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme),
	}
}

// Complete records the cluster names given as arguments.
func (o *ClustersOptions) Complete(_ *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks -o: wide or one of kubectl's machine formats.
func (o *ClustersOptions) Validate() error {
	return cli.ValidateListOutput(o.PrintFlags)
}
