// Package addon implements `kubectl ocm addon`: enable and disable add-ons
// on managed clusters (ManagedClusterAddOns in the cluster namespaces),
// list the add-ons of the hub (ClusterManagementAddOns), show one add-on on
// each cluster, and create a template add-on (an AddOnTemplate and its
// ClusterManagementAddOn) from plain manifests. Flag names follow
// `clusteradm addon`.
package addon

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdAddon returns `kubectl ocm addon` with its subcommands. getter
// selects the hub (--kubeconfig, --context).
func NewCmdAddon(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "addon",
		Aliases: []string{"addons"},
		Short:   "Enable, inspect and create add-ons of managed clusters",
		Long: `Manage add-ons: agents the hub installs on managed clusters, such as policy
engines, observability agents or proxies. An add-on is registered on the hub by
a ClusterManagementAddOn; it is enabled on a cluster by a ManagedClusterAddOn of
the same name in the cluster's namespace, which also reports the add-on's state
there (Available, Degraded, Progressing, configurations).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdEnable(getter, streams), newCmdDisable(getter, streams), newCmdList(getter, streams),
		newCmdGet(getter, streams), newCmdCreate(getter, streams))
	return cmd
}

func newCmdEnable(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewEnableOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "enable --names ADDON[,ADDON...] --clusters CLUSTER[,CLUSTER...]",
		Short: "Enable add-ons on managed clusters (create their ManagedClusterAddOns)",
		Long: `Enable the add-ons given with --names on the managed clusters given with
--clusters: write ManagedClusterAddOn ADDON in the namespace of each cluster,
with server-side apply, so running it again updates it. Each add-on must be
registered on the hub and each cluster accepted; when one is not, nothing is
written.

--config-file names a YAML file whose configs: list (group, resource,
namespace, name) becomes spec.configs, overriding the add-on's defaults on
these clusters (see docs/addons.md#kubectl-ocm-addon-enable).

Unlike the other commands, -n (--namespace) is the namespace the add-on agent
is installed in on the managed cluster, as in clusteradm.`,
		Example: cli.Examples(`
			# Enable helloworld on cluster1 and cluster2
			kubectl ocm addon enable --names helloworld --clusters cluster1,cluster2

			# Install the agent in namespace addons, with configurations, and wait until it is available
			kubectl ocm addon enable --names helloworld --clusters cluster1 -n addons --config-file configs.yaml --wait

			# Annotate and label the ManagedClusterAddOns
			kubectl ocm addon enable --names helloworld --clusters cluster1 --annotate owner=ops --labels tier=edge

			# Print the ManagedClusterAddOn without writing it
			kubectl ocm addon enable --names helloworld --clusters cluster1 --dry-run=client -o yaml`),
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	addNamesFlag(cmd, getter, &o.Names, "The add-ons to enable (ClusterManagementAddOn names), comma separated.")
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed clusters to enable them on, comma separated.")
	f.StringVarP(&o.InstallNamespace, "namespace", "n", addonv1alpha1.DefaultAddonInstallNamespace, "The namespace on the managed clusters to install the add-on agent in (spec.installNamespace).")
	f.StringToStringVar(&o.Annotations, "annotate", nil, "Annotations of the ManagedClusterAddOns, KEY=VALUE (repeatable or comma separated).")
	f.StringToStringVar(&o.Labels, "labels", nil, "Labels of the ManagedClusterAddOns, KEY=VALUE (repeatable or comma separated).")
	f.StringVar(&o.ConfigFile, "config-file", "", "A YAML file whose configs: list (group, resource, namespace, name) becomes spec.configs.")
	f.BoolVar(&o.Wait, "wait", false, "Wait until the add-ons are Available on every cluster, showing each cluster's state.")
	cli.AddTimeoutFlag(f, &o.Timeout, defaultTimeout, "How long --wait waits.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	_ = cmd.MarkFlagRequired("clusters")
	_ = cmd.MarkFlagFilename("config-file", "yaml", "yml")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	_ = cmd.RegisterFlagCompletionFunc("namespace", cobra.NoFileCompletions)
	return cmd
}

func newCmdDisable(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewDisableOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "disable --names ADDON[,ADDON...] (--clusters CLUSTER[,CLUSTER...] | --all-clusters)",
		Short: "Disable add-ons on managed clusters (delete their ManagedClusterAddOns)",
		Long: `Disable the add-ons given with --names on the managed clusters given with
--clusters, or on every cluster they are enabled on with --all-clusters: delete
their ManagedClusterAddOns. The hub's add-on manager then removes the agent from
each cluster; an add-on with a pre-delete hook keeps its ManagedClusterAddOn
(finalizer ` + addonv1alpha1.AddonPreDeleteHookFinalizer + `) until the hook
has run there. --wait follows that until every ManagedClusterAddOn is gone.

An unknown add-on or cluster, or an add-on not enabled on a named cluster
(unless --ignore-not-found), fails the command before anything is deleted.`,
		Example: cli.Examples(`
			# Disable helloworld on cluster1
			kubectl ocm addon disable --names helloworld --clusters cluster1

			# Disable it everywhere and wait until every agent is removed
			kubectl ocm addon disable --names helloworld --all-clusters --wait --timeout 2m`),
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	f := cmd.Flags()
	addNamesFlag(cmd, getter, &o.Names, "The add-ons to disable, comma separated.")
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The managed clusters to disable them on, comma separated.")
	f.BoolVar(&o.AllClusters, "all-clusters", false, "Disable them on every cluster they are enabled on.")
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat an add-on not enabled on a named cluster as disabled.")
	f.BoolVar(&o.Wait, "wait", false, "Wait until the ManagedClusterAddOns are gone, showing what holds each one.")
	cli.AddTimeoutFlag(f, &o.Timeout, defaultTimeout, "How long --wait waits.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

func newCmdList(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewListOptions(getter, streams)
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the add-ons of the hub: install strategy, clusters enabled, available, progressing",
		Long: `List the add-ons registered on the hub (ClusterManagementAddOns): how each is
installed (Manual: where 'addon enable' enables it; Placements: on the clusters
the named Placements select), who manages it (addon-manager: the hub's add-on
manager; self: the add-on's own controller), and on how many clusters it is
enabled, Available and Progressing. -o wide adds the display name, the
Degraded count and the supported configurations with their defaults; -o json
or yaml prints the ClusterManagementAddOns.`,
		Example: cli.Examples(`
			# Every add-on
			kubectl ocm addon list

			# With the supported configurations
			kubectl ocm addon list -o wide`),
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

func newCmdGet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewGetOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "get NAME [--clusters CLUSTER[,CLUSTER...]]",
		Short: "Show an add-on on each cluster: available, degraded, progressing, configurations",
		Long: `Show add-on NAME on each managed cluster it is enabled on, from its
ManagedClusterAddOns: Available, Degraded, Progressing with its reason, how its
health is checked, and each configuration desired and whether the agent has
applied it. -o wide adds the install namespace, Configured and the message that
says why a cluster is not yet fine.

When the add-on's agents have hub credentials, each cluster's registration
follows: the driver, the Secret written, expiry and refresh, and the newest
certificate request with why it is pending or denied; then the install
progressions of the add-on's Placements (see docs/addons.md#kubectl-ocm-addon-get).

-o json or yaml prints the ManagedClusterAddOns.`,
		Example: cli.Examples(`
			# helloworld on every cluster
			kubectl ocm addon get helloworld

			# On cluster1 only, with the messages
			kubectl ocm addon get helloworld --clusters cluster1 -o wide

			# The ManagedClusterAddOns as YAML
			kubectl ocm addon get helloworld -o yaml`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteAddons(getter)),
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringSliceVarP(&o.Clusters, "clusters", "c", nil, "Only show these managed clusters, comma separated.")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

func newCmdCreate(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCreateOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "create NAME -f FILE|DIR [--placement NAMESPACE/NAME] [--hub-registration] [--cluster-role-bind ROLE]",
		Short: "Create a template add-on from plain manifests (an AddOnTemplate and its ClusterManagementAddOn)",
		Long: `Register add-on NAME on the hub from the manifests of its agent, read from -f
(files, and directories; -R for their subdirectories). No code is needed: the
hub's add-on manager deploys the manifests to every cluster the add-on is
enabled on, replacing {{CLUSTER_NAME}}, {{INSTALL_NAMESPACE}}, {{HUB_KUBECONFIG}}
and {{ADDON_NAME}} in them.

It writes AddOnTemplate NAME-VERSION (--version) and ClusterManagementAddOn NAME.
--hub-registration gives the agent a hub credential; --cluster-role-bind ROLE
also binds ClusterRole ROLE to it on the hub. The add-on is then enabled where
'kubectl ocm addon enable' enables it or, with --placement, on every cluster
that Placement selects. An add-on that exists is replaced only with --overwrite.

See docs/addons.md#kubectl-ocm-addon-create for the checks on the manifests.`,
		Example: cli.Examples(`
			# An add-on from the manifests in ./helloworld, enabled by hand
			kubectl ocm addon create helloworld -f helloworld/ -R --hub-registration --cluster-role-bind helloworld-agent

			# Installed on every cluster placement apps/all selects
			kubectl ocm addon create helloworld -f helloworld/ -R --placement apps/all

			# A new version of an existing add-on
			kubectl ocm addon create helloworld -f helloworld/ -R --version 0.0.2 --overwrite

			# Print the AddOnTemplate and the ClusterManagementAddOn without writing them
			kubectl ocm addon create helloworld -f helloworld/ --dry-run=client -o yaml`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Files or directories of the agent's manifests (repeatable; - reads stdin).")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Also read the subdirectories of directories given with -f.")
	f.StringVar(&o.Version, "version", defaultVersion, "The add-on's version: the AddOnTemplate is named NAME-VERSION.")
	f.StringVar(&o.Placement, "placement", "", "Install the add-on on the clusters Placement NAMESPACE/NAME selects (install strategy Placements).")
	f.StringVar(&o.Placement, "placement-ref", "", "Alias of --placement, as in clusteradm.")
	_ = f.MarkHidden("placement-ref")
	f.BoolVar(&o.HubRegistration, "hub-registration", false, "Give the agent a hub credential (a KubeClient registration): Secret NAME-hub-kubeconfig on the managed cluster.")
	f.StringVar(&o.ClusterRoleBind, "cluster-role-bind", "", "Bind this ClusterRole to the agent in its cluster's namespace on the hub (implies --hub-registration).")
	f.StringToStringVar(&o.Labels, "labels", nil, "Labels of the AddOnTemplate and the ClusterManagementAddOn, KEY=VALUE (repeatable or comma separated).")
	f.BoolVar(&o.Overwrite, "overwrite", false, "Replace add-on NAME (and AddOnTemplate NAME-VERSION) if it exists.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("placement", cli.CompletePlacementRefs(getter))
	_ = cmd.RegisterFlagCompletionFunc("placement-ref", cli.CompletePlacementRefs(getter))
	return cmd
}

// addNamesFlag adds --names, completed with the hub's add-ons, to cmd.
func addNamesFlag(cmd *cobra.Command, getter genericclioptions.RESTClientGetter, target *[]string, usage string) {
	cmd.Flags().StringSliceVar(target, "names", nil, usage)
	_ = cmd.MarkFlagRequired("names")
	_ = cmd.RegisterFlagCompletionFunc("names", cli.CompleteAddons(getter))
}
