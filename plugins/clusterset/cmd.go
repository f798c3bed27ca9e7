// Package clusterset implements `kubectl ocm clusterset`: create, list and
// delete ManagedClusterSets, move clusters into them and bind them to
// namespaces (ManagedClusterSetBindings) so that Placements there can select
// their clusters.
package clusterset

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdClusterSet returns `kubectl ocm clusterset` with its subcommands.
// getter selects the hub (--kubeconfig, --context, -n).
func NewCmdClusterSet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "clusterset",
		Aliases: []string{"clustersets", "managedclusterset", "mclset"},
		Short:   "Group managed clusters into sets and bind the sets to namespaces",
		Long: `Group managed clusters into ManagedClusterSets and bind the sets to namespaces
with ManagedClusterSetBindings: a Placement selects only among the clusters of
the sets bound to its namespace.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdCreate(getter, streams), newCmdGet(getter, streams), newCmdDelete(getter, streams),
		newCmdSet(getter, streams), newCmdBind(getter, streams, false), newCmdBind(getter, streams, true))
	return cmd
}

func newCmdCreate(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCreateOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a ManagedClusterSet",
		Long: `Create ManagedClusterSet NAME. By default its members are the clusters labeled
cluster.open-cluster-management.io/clusterset=NAME (add them with
` + "`kubectl ocm clusterset set`" + `); with --cluster-selector it holds every cluster
the label selector matches instead.`,
		Example: cli.Examples(`
			# A set whose clusters are added by name
			kubectl ocm clusterset create prod
			kubectl ocm clusterset set prod --clusters cluster1,cluster2

			# A set of every cluster labeled env=prod in eu or us
			kubectl ocm clusterset create prod-eu-us --cluster-selector 'env=prod,region in (eu,us)'`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.ClusterSelector, "cluster-selector", "", "Make the set hold the clusters this label selector matches (selector type LabelSelector).")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	return cmd
}

func newCmdGet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewGetOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List ManagedClusterSets: where they are bound, their clusters and managed namespaces",
		Example: cli.Examples(`
			# Every set, where it is bound, how many clusters it holds and the
			# namespaces it has created on them
			kubectl ocm clusterset get

			# With the ClusterSetEmpty condition
			kubectl ocm clusterset get -o wide

			# Set prod as YAML
			kubectl ocm clusterset get prod -o yaml`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteClusterSets(getter)),
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

func newCmdDelete(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewDeleteOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a ManagedClusterSet (not default or global; not while bound unless --force)",
		Long: `Delete ManagedClusterSet NAME. The sets default and global, which the hub
maintains, cannot be deleted. A set bound to a namespace is refused unless
--force: the Placements there would lose its clusters. Deleting a set that
still has member clusters warns: they keep their label and belong to no set.`,
		Example: cli.Examples(`
			# Delete set staging
			kubectl ocm clusterset delete staging

			# Delete it although it is still bound
			kubectl ocm clusterset delete staging --force`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteClusterSets(getter)),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete the set even if it is bound to namespaces (the bindings stay, reporting Bound=False).")
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a set that does not exist as deleted.")
	return cmd
}

func newCmdSet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewSetOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "set NAME [--clusters CLUSTER[,CLUSTER...]] [--namespaces NAMESPACE[,NAMESPACE...]]",
		Short: "Move managed clusters into a ManagedClusterSet, or add namespaces it manages",
		Long: `Move managed clusters into ManagedClusterSet NAME by labeling them
cluster.open-cluster-management.io/clusterset=NAME (--clusters). A cluster
belongs to one such set at a time, so this moves it out of its previous set
(often default).

--namespaces adds names to the set's spec.managedNamespaces, keeping those it
has and adding none twice: the agent of every member cluster creates these
namespaces on its cluster. Each name must be a DNS-1123 label. --namespaces
works on sets of either selector type and may be given without --clusters.

Every name is checked, and every cluster read, before anything is changed.`,
		Example: cli.Examples(`
			# Put cluster1 and cluster2 into set prod
			kubectl ocm clusterset set prod --clusters cluster1,cluster2

			# Have every cluster of set prod hold namespaces team-a and team-b
			kubectl ocm clusterset set prod --namespaces team-a,team-b

			# Check that the hub would admit moving cluster3 into prod, changing nothing
			kubectl ocm clusterset set prod --clusters cluster3 --dry-run=server`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteClusterSets(getter)),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed clusters to move into the set, comma separated.")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	cmd.Flags().StringSliceVar(&o.Namespaces, "namespaces", nil, "Namespaces to add to the set's managed namespaces, comma separated: the agents create them on every member cluster.")
	_ = cmd.RegisterFlagCompletionFunc("namespaces", cobra.NoFileCompletions)
	addResultFlags(cmd, &o.Output, &o.DryRun, `"client" says which clusters would move and which namespaces would be added, changing nothing; "server" also has the hub admit each change without making it.`)
	return cmd
}

func newCmdBind(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, unbind bool) *cobra.Command {
	o := NewBindOptions(getter, streams, unbind)
	cmd := &cobra.Command{
		Use:   "bind NAME [-n NAMESPACE]",
		Short: "Bind a ManagedClusterSet to a namespace so its Placements can use the set",
		Long: `Bind ManagedClusterSet NAME to a namespace (-n, else the context's namespace)
by creating the ManagedClusterSetBinding NAME there: the Placements of that
namespace may then select the set's clusters. The namespace must exist.`,
		Example: cli.Examples(`
			# Let the Placements of namespace apps use set prod
			kubectl ocm clusterset bind prod -n apps

			# Check that the hub would admit the binding (the bind permission on
			# the set), creating nothing
			kubectl ocm clusterset bind prod -n apps --dry-run=server`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteClusterSets(getter)),
		RunE:              cli.RunE(o),
	}
	dryRunUsage := `"client" says which binding would be created, creating nothing; "server" also has the hub admit it without storing it.`
	if unbind {
		cmd.Use = "unbind NAME [-n NAMESPACE]"
		cmd.Short = "Unbind a ManagedClusterSet from a namespace"
		cmd.Long = `Delete the ManagedClusterSetBinding NAME of a namespace (-n, else the
context's namespace): the Placements there no longer select the set's clusters.`
		cmd.Example = cli.Examples(`
			# Placements of namespace apps stop using set prod
			kubectl ocm clusterset unbind prod -n apps

			# Say whether there is a binding to delete, deleting nothing
			kubectl ocm clusterset unbind prod -n apps --dry-run`)
		cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Succeed when the set is not bound to the namespace.")
		dryRunUsage = cli.DeleteDryRunUsage
	}
	addResultFlags(cmd, &o.Output, &o.DryRun, dryRunUsage)
	return cmd
}

// addResultFlags adds -o json|yaml, which prints what the verb did as a
// result object, and --dry-run with the verb's usage text.
func addResultFlags(cmd *cobra.Command, output, dryRun *string, dryRunUsage string) {
	cli.AddOutputFlag(cmd, output, "Output format: json or yaml (what changed, with dryRun set in a dry run). Empty prints a line per change.", cli.ReportFormats)
	cli.AddDryRunFlagUsage(cmd, dryRun, dryRunUsage)
}
