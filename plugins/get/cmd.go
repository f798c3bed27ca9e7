// Package get implements `kubectl ocm get`, which lists Open Cluster
// Management objects on the hub in kubectl's style.
package get

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdGet returns `kubectl ocm get`. getter selects the hub.
func NewCmdGet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List managed clusters, or show the Klusterlet of a managed cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdClusters(getter, streams), newCmdKlusterlet(getter, streams))
	return cmd
}

func newCmdClusters(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewClustersOptions(getter, streams)
	cmd := &cobra.Command{
		Use:     "clusters [NAME...]",
		Aliases: []string{"cluster", "managedclusters", "mcl"},
		Short:   "List managed clusters: accepted, joined, available",
		Example: cli.Examples(`
			# List every managed cluster
			kubectl ocm get clusters --context hub

			# With version, capacity, cluster set and claims
			kubectl ocm get clusters -o wide

			# The clusters of cluster set prod, as YAML
			kubectl ocm get clusters --clusterset prod -o yaml`),
		ValidArgsFunction: cli.ExceptArgs(cli.CompleteClusters(getter)),
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.ClusterSet, "clusterset", "", "Only list the clusters of this ManagedClusterSet.")
	_ = cmd.RegisterFlagCompletionFunc("clusterset", cli.CompleteClusterSets(getter))
	return cmd
}
