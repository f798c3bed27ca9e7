// Package work implements `kubectl ocm work`: create delivers manifests to
// managed clusters as ManifestWorks, get lists the works, status shows each
// manifest on one cluster and delete removes works, waiting for the agents
// to remove what they applied. The rollout and diff verbs are in the
// packages rollout and diff.
package work

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/diff"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/rollout"
)

// NewCmdWork returns `kubectl ocm work` with its subcommands. getter selects
// the hub (--kubeconfig, --context).
func NewCmdWork(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "work",
		Aliases: []string{"works", "manifestwork", "mw"},
		Short:   "Deliver manifests to managed clusters and follow them (ManifestWorks)",
		Long: `Deliver Kubernetes manifests to managed clusters as ManifestWorks on the hub,
one per cluster in the cluster's namespace, and follow what the work agent of
each cluster reports: applied, available, status feedback, drift.

Managed clusters are named with --clusters (or -n, a cluster's namespace on
the hub); kubectl's --context and --cluster select the hub in the kubeconfig.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdCreate(getter, streams), newCmdGet(getter, streams), newCmdStatus(getter, streams), newCmdDelete(getter, streams), rollout.NewCmdRollout(getter, streams), diff.NewCmdDiff(getter, streams))
	return cmd
}

func newCmdCreate(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCreateOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "create NAME -f FILE|DIR (--clusters CLUSTER[,CLUSTER...] | --placement NAMESPACE/NAME)",
		Short: "Create a ManifestWork NAME in each cluster's namespace, or a ManifestWorkReplicaSet following a Placement",
		Long: fmt.Sprintf(`Create a ManifestWork NAME in the namespace of each managed cluster given with
--clusters, holding the manifests read from -f (files of YAML or JSON documents,
and directories; -R for their subdirectories). Each cluster must exist and be
accepted; --overwrite replaces the manifests of existing works.

Manifests over %d KiB in all, what one ManifestWork holds, are delivered as a
large payload, up to 256 MiB: they are cut into ManifestChunks, each named by
the digest of its content, written to each cluster's namespace (or the
placement's) before the work, which lists them in one ManifestPayload
manifest. A chunk already there is not written again; the progress of the
writes goes to stderr, and then how many chunks were written and how many were
already on the hub. The agent applies the payload once every chunk is present
and verified.

With --placement NAMESPACE/NAME instead, the manifests go into one
ManifestWorkReplicaSet NAME in the placement's namespace, which the hub rolls
out to every cluster the placement selects as --rollout says (--placement
implies --replicaset).`, workv1.DefaultManifestsSizeLimit/1024),
		Example: cli.Examples(`
			# Deliver app.yaml to cluster1 and cluster2
			kubectl ocm work create web -f app.yaml --clusters cluster1,cluster2

			# Every manifest under ./deploy, replacing the manifests of an existing work
			kubectl ocm work create web -f deploy/ -R --clusters cluster1 --overwrite

			# Create the objects once and never update them
			kubectl ocm work create seed -f seed.yaml --clusters cluster1 --update-strategy CreateOnly

			# Adopt objects that already exist on the cluster only when they match the manifests
			kubectl ocm work create web -f app.yaml --clusters cluster1 --take-over IfNoDiff

			# Print the ManifestWork without creating it
			kubectl ocm work create web -f app.yaml --clusters cluster1 --dry-run=client -o yaml

			# Every cluster placement apps/web selects, a quarter of them at a time
			kubectl ocm work create web -f app.yaml --placement apps/web --rollout Progressive --max-concurrency 25%

			# One decision group at a time, soaking 5 minutes, stopping after 2 failures
			kubectl ocm work create web -f app.yaml --placement apps/web --replicaset \
			  --rollout ProgressivePerGroup --min-success-time 5m --max-failures 2 --progress-deadline 10m`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Files or directories of the manifests (repeatable; - reads stdin).")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Also read the subdirectories of directories given with -f.")
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed clusters that get the work, comma separated.")
	f.BoolVar(&o.Overwrite, "overwrite", false, "Replace the manifests of a ManifestWork NAME that already exists.")
	f.StringVar(&o.UpdateStrategy, "update-strategy", "", "How the agent updates every manifest: Update (default), CreateOnly, ServerSideApply or ReadOnly.")
	f.StringVar(&o.TakeOver, "take-over", "", "Whether the agent takes over an object the work did not create: Always (default), IfNoDiff (when it already matches) or Never. Sets annotation "+workv1.TakeOverAnnotation+".")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	o.Rollout.addFlags(cmd)
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("placement", cli.CompletePlacementRefs(getter))
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	_ = cmd.RegisterFlagCompletionFunc("update-strategy", cobra.FixedCompletions(updateStrategies, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("take-over", cobra.FixedCompletions(takeOverRules(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newCmdGet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewGetOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List ManifestWorks: manifests, applied, available, drifted",
		Long: `List the ManifestWorks of managed clusters: how many manifests each holds,
whether the agent applied them, whether the objects are available and how many
drifted from their manifests. When a work listed is a large payload, a PAYLOAD
column says its size and how many of its chunks the agent has staged.

A cluster's works live in its namespace on the hub, so --clusters a,b lists the
works of those clusters, -n CLUSTER those of one cluster, and without either,
or with -A (--all-namespaces), the works of every cluster.`,
		Example: cli.Examples(`
			# Every work of every cluster
			kubectl ocm work get

			# The works of cluster1, with the Progressing, Degraded, Complete and Deleting conditions
			kubectl ocm work get --clusters cluster1 -o wide

			# Work web on every cluster, as YAML
			kubectl ocm work get web -A -o yaml

			# The ManifestWorkReplicaSets of every namespace
			kubectl ocm work get --replicaset -A

			# ManifestWorkReplicaSet web and the rollout state of each of its clusters
			kubectl ocm work get web --replicaset -n apps`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: workargs.CompleteWorks(getter),
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "Only list the works of these managed clusters, comma separated.")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List the works of every cluster namespace, whatever -n says; with --replicaset, the ManifestWorkReplicaSets of every namespace. --all-clusters is an alias.")
	f.BoolVar(&o.AllNamespaces, "all-clusters", false, "Alias of --all-namespaces.")
	_ = f.MarkHidden("all-clusters")
	f.BoolVarP(&o.ReplicaSet, "replicaset", "r", false, "List ManifestWorkReplicaSets (of -n NAMESPACE, or -A); with NAME, also the rollout state per cluster.")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

func newCmdStatus(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewStatusOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "status NAME (--clusters CLUSTER | -n CLUSTER)",
		Short: "Show each manifest of a work on one cluster: applied, available, feedback, drift",
		Long: `Show, for each manifest of ManifestWork NAME on one managed cluster, what its
work agent reports: Applied, Available, the status feedback values, when the
object last drifted from its manifest, and the message of any condition that is
False. For a large payload, a first line says its size and how many of its
chunks the agent has staged, and the manifests are those of the payload, once
the agent has staged it. The cluster is given with --clusters, or with -n as
the cluster's namespace on the hub.`,
		Example: cli.Examples(`
			# The manifests of work web on cluster1
			kubectl ocm work status web --clusters cluster1

			# The same as JSON
			kubectl ocm work status web -n cluster1 -o json`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: workargs.CompleteWorks(getter),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed cluster of the work (one name).")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints a table.", cli.ReportFormats)
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

func newCmdDelete(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewDeleteOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "delete NAME (--clusters CLUSTER[,CLUSTER...] | -n CLUSTER | --replicaset [-n NAMESPACE])",
		Short: "Delete a ManifestWork from clusters; its agent removes what it applied",
		Long: `Delete ManifestWork NAME from the namespace of each cluster given with
--clusters (or of the one cluster whose namespace -n names). The work agent of each cluster then removes the objects the work
applied (unless its delete option orphans them) and lets the ManifestWork go;
--wait follows that until every work is gone.`,
		Example: cli.Examples(`
			# Delete work web from cluster1 and cluster2
			kubectl ocm work delete web --clusters cluster1,cluster2

			# Wait until the agents removed the applied objects
			kubectl ocm work delete web --clusters cluster1 --wait --timeout 2m

			# Delete ManifestWorkReplicaSet web: the hub removes its works from every cluster
			kubectl ocm work delete web --replicaset -n apps

			# Check that the hub would delete web from cluster1, deleting nothing
			kubectl ocm work delete web --clusters cluster1 --dry-run=server`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: workargs.CompleteWorks(getter),
		RunE:              cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed clusters whose work NAME is deleted, comma separated.")
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a work that does not exist as deleted.")
	f.BoolVar(&o.Wait, "wait", false, "Wait until the works are gone, showing the agents' progress.")
	cli.AddTimeoutFlag(f, &o.Timeout, 5*time.Minute, "How long --wait waits.")
	f.BoolVarP(&o.ReplicaSet, "replicaset", "r", false, "Delete ManifestWorkReplicaSet NAME of -n NAMESPACE instead of ManifestWorks.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, cli.DeleteDryRunUsage)
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}
