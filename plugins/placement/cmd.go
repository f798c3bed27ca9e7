// Package placement implements `kubectl ocm placement`: create Placements
// from flags, list them and their decisions, delete them, and explain, by
// running the hub's own scheduling rules (pkg/placement), why each cluster
// was or was not selected.
package placement

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdPlacement returns `kubectl ocm placement` with its subcommands.
// getter selects the hub and the namespace (-n).
func NewCmdPlacement(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "placement",
		Aliases: []string{"placements", "plc"},
		Short:   "Select managed clusters by rules instead of names (Placements)",
		Long: `Create Placements, which select managed clusters among those of the cluster
sets bound to their namespace by labels, claims, CEL expressions, taints and
scores, and see what they selected and why.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdCreate(getter, streams), newCmdGet(getter, streams), newCmdDecisions(getter, streams),
		newCmdExplain(getter, streams), newCmdDelete(getter, streams))
	return cmd
}

func newCmdCreate(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdCreateWith(NewCreateOptions(getter, streams), getter)
}

// newCmdCreateWith returns `placement create` filling o.
func newCmdCreateWith(o *CreateOptions, getter genericclioptions.RESTClientGetter) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create NAME [-n NAMESPACE]",
		Short: "Create a Placement from flags",
		Long: `Create Placement NAME in a namespace (-n, else the context's). It selects among
the clusters of the ManagedClusterSets bound to that namespace (see
` + "`kubectl ocm clusterset bind`" + `), narrowed by --clustersets.

--label-selectors, --claim-selectors and --cel (each repeatable) are ANDed in
the placement's one predicate; for alternatives (OR) use one --cel expression
with ||. Selectors use kubectl's -l syntax. Prioritizers score the clusters
when --count limits the selection: BuiltIn:NAME[:WEIGHT] with NAME Balance,
Steady, ResourceAllocatableCPU or ResourceAllocatableMemory, or
AddOn:RESOURCE:SCORE[:WEIGHT] for an AddOnPlacementScore; weights range from
-10 to 10 (default 1). --spread KEY:MAXSKEW[:DoNotSchedule|ScheduleAnyway][:claim]
spreads the selection over the values of a label (or claim). --tolerate
KEY[=VALUE][:EFFECT][:SECONDS] tolerates a taint (KEY * tolerates every taint).`,
		Example: cli.Examples(`
			# Two production clusters of set prod, preferring the most allocatable CPU
			kubectl ocm placement create web -n apps --clustersets prod \
			  --label-selectors 'env=prod,region in (eu,us)' --count 2 \
			  --prioritizers BuiltIn:ResourceAllocatableCPU:2,BuiltIn:Balance:1

			# Clusters claiming platform AWS, by a CEL expression too
			kubectl ocm placement create aws -n apps --claim-selectors 'platform.open-cluster-management.io in (AWS)' \
			  --cel 'managedCluster.metadata.labels["tier"] != "dev"'

			# Spread three clusters over regions, tolerating unreachable clusters for 5 minutes
			kubectl ocm placement create spread -n apps --count 3 --spread region:1:DoNotSchedule \
			  --tolerate cluster.open-cluster-management.io/unreachable:NoSelect:300

			# Print the Placement without creating it
			kubectl ocm placement create web -n apps --count 2 --dry-run=client -o yaml`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&o.ClusterSets, "clustersets", nil, "Only select among these bound ManagedClusterSets, comma separated (default: every bound set).")
	f.StringArrayVar(&o.LabelSelectors, "label-selectors", nil, "Cluster label selector in kubectl -l syntax, such as 'env=prod,region in (eu,us)' (repeatable, ANDed).")
	f.StringArrayVar(&o.ClaimSelectors, "claim-selectors", nil, "Cluster claim selector in kubectl -l syntax (repeatable, ANDed).")
	f.StringArrayVar(&o.CelExpressions, "cel", nil, "CEL expression over managedCluster that must be true (repeatable, ANDed).")
	f.Int32Var(&o.Count, "count", 0, "How many clusters to select (numberOfClusters); unset selects every matching cluster.")
	f.StringSliceVar(&o.Prioritizers, "prioritizers", nil, "Prioritizers with weights: BuiltIn:NAME[:WEIGHT] or AddOn:RESOURCE:SCORE[:WEIGHT], comma separated.")
	f.StringVar(&o.PrioritizerMode, "prioritizer-mode", "", "Additive (default: unlisted prioritizers keep their default weights) or Exact (only the listed ones count).")
	f.StringSliceVar(&o.Spread, "spread", nil, "Spread constraint KEY:MAXSKEW[:DoNotSchedule|ScheduleAnyway][:claim] (repeatable, at most 8).")
	f.StringSliceVar(&o.Tolerate, "tolerate", nil, "Tolerate a taint: KEY[=VALUE][:EFFECT][:SECONDS] (repeatable).")
	f.BoolVar(&o.Overwrite, "overwrite", false, "Replace the spec of a Placement NAME that already exists.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	_ = cmd.RegisterFlagCompletionFunc("clustersets", cli.CompleteClusterSets(getter))
	_ = cmd.RegisterFlagCompletionFunc("prioritizer-mode", cobra.FixedCompletions([]string{"Additive", "Exact"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("prioritizers", cobra.FixedCompletions([]string{"BuiltIn:Balance:1", "BuiltIn:Steady:1",
		"BuiltIn:ResourceAllocatableCPU:1", "BuiltIn:ResourceAllocatableMemory:1", "AddOn:"}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	return cmd
}

func newCmdGet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewGetOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List Placements: succeeded, reason, selected clusters",
		Example: cli.Examples(`
			# The placements of namespace apps
			kubectl ocm placement get -n apps

			# Every placement, with cluster sets and count
			kubectl ocm placement get -A -o wide

			# Placement web as YAML
			kubectl ocm placement get web -n apps -o yaml`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompletePlacements(getter)),
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List the placements of every namespace.")
	return cmd
}

func newCmdDecisions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DecisionsOptions{newNamedOptions(getter, streams)}
	cmd := &cobra.Command{
		Use:   "decisions NAME",
		Short: "List the clusters a Placement decided, with decision group and score",
		Example: cli.Examples(`
			# The decisions of placement web
			kubectl ocm placement decisions web -n apps

			# The PlacementDecision objects as YAML
			kubectl ocm placement decisions web -n apps -o yaml`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompletePlacements(getter)),
		RunE:              cli.RunE(o),
	}
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints a table.", cli.ReportFormats)
	return cmd
}

func newCmdExplain(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExplainOptions{newNamedOptions(getter, streams)}
	cmd := &cobra.Command{
		Use:   "explain NAME",
		Short: "Explain why each cluster was or was not selected by a Placement",
		Long: `Read what the hub's scheduler reads (the Placement, the ManagedClusters, the
cluster sets and the bindings of its namespace, the AddOnPlacementScores and
the decisions of every placement), run the same scheduling rules, and print
every cluster: selected or not, the step that decided (cluster set,
predicate, taint, score, spread), the reason, and its score per prioritizer.
A note says when the written decisions differ from what the rules select now,
for example when the hub's scheduler is not running.`,
		Example: cli.Examples(`
			# Why placement web selected what it selected
			kubectl ocm placement explain web -n apps

			# The same as JSON
			kubectl ocm placement explain web -n apps -o json`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompletePlacements(getter)),
		RunE:              cli.RunE(o),
	}
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints a summary and a table.", cli.ReportFormats)
	return cmd
}

func newCmdDelete(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{NamedOptions: newNamedOptions(getter, streams), DryRun: cli.DryRunNone}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a Placement and, with it, its decisions",
		Example: cli.Examples(`
			# Delete placement web of namespace apps
			kubectl ocm placement delete web -n apps

			# Check that the hub would delete it, deleting nothing
			kubectl ocm placement delete web -n apps --dry-run=server`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompletePlacements(getter)),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a placement that does not exist as deleted.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, cli.DeleteDryRunUsage)
	return cmd
}
