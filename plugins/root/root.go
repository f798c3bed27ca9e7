// Package root assembles the `kubectl ocm` command tree: the shared kubectl
// flags and one subcommand per verb.
package root

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/addon"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/clusterset"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/credentials"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/get"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/importcmd"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/mcp"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/placement"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/proxy"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/unjoin"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/upgrade"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work"
)

// DefaultIOStreams returns the process's standard streams.
func DefaultIOStreams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// NewCmdRoot returns the `kubectl ocm` root command.
func NewCmdRoot(streams genericiooptions.IOStreams) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use:   "kubectl-ocm",
		Short: "Manage a fleet of Kubernetes clusters from one hub",
		Long: `kubectl ocm installs and drives a fleet of Kubernetes clusters managed from one
hub cluster with the Open Cluster Management (OCM) APIs: it sets up the hub,
joins and accepts managed clusters, upgrades the hub and the agents, groups
the clusters into cluster sets, creates and inspects works and placements,
creates, enables and inspects add-ons, and reaches the managed clusters' API
servers through the hub.`,
		SilenceUsage:  true,
		SilenceErrors: false,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl ocm",
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	configFlags.AddFlags(cmd.PersistentFlags())

	addVerbs(cmd, configFlags, streams)
	addClusteradmAliases(cmd, func() *cobra.Command {
		tree := &cobra.Command{Use: "kubectl-ocm"}
		addVerbs(tree, configFlags, streams)
		return tree
	})
	failUnknownSubcommands(cmd)
	return cmd
}

// addVerbs adds the verbs, in their groups, to root.
func addVerbs(cmd *cobra.Command, configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) {
	cmd.AddGroup(&cobra.Group{ID: groupHub, Title: "Hub Commands:"})
	for _, verb := range []*cobra.Command{hub.NewCmdHub(configFlags, streams), accept.NewCmdAccept(configFlags, streams), get.NewCmdGet(configFlags, streams), work.NewCmdWork(configFlags, streams), addon.NewCmdAddon(configFlags, streams), upgrade.NewCmdUpgrade(configFlags, streams), proxy.NewCmdProxy(configFlags, streams)} {
		verb.GroupID = groupHub
		cmd.AddCommand(verb)
	}
	cmd.AddGroup(&cobra.Group{ID: groupPlacement, Title: "Placement Commands:"})
	for _, verb := range []*cobra.Command{clusterset.NewCmdClusterSet(configFlags, streams), placement.NewCmdPlacement(configFlags, streams)} {
		verb.GroupID = groupPlacement
		cmd.AddCommand(verb)
	}
	cmd.AddGroup(&cobra.Group{ID: groupManagedCluster, Title: "Managed Cluster Commands:"})
	for _, verb := range []*cobra.Command{join.NewCmdJoin(configFlags, streams), unjoin.NewCmdUnjoin(configFlags, streams), importcmd.NewCmdImport(configFlags, streams, accept.Clusters(configFlags, streams))} {
		verb.GroupID = groupManagedCluster
		cmd.AddCommand(verb)
	}
	cmd.AddGroup(&cobra.Group{ID: groupOther, Title: "Other Commands:"})
	for _, verb := range []*cobra.Command{version.NewCmdVersion(configFlags, streams), credentials.NewCmdCredentials(configFlags, streams), mcp.NewCmdMCP(configFlags, streams)} {
		verb.GroupID = groupOther
		cmd.AddCommand(verb)
	}
}

const (
	groupOther          = "other"
	groupHub            = "hub"
	groupPlacement      = "placement"
	groupManagedCluster = "managed-cluster"
)
