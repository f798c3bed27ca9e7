// Package upgrade implements `kubectl ocm upgrade hub|klusterlet`: it sets
// the ocm-controller image of the ClusterManager or a Klusterlet, and of the
// operator that installs it, and waits until the new version runs
// everywhere it should.
package upgrade

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdUpgrade returns `kubectl ocm upgrade` with its subcommands. getter
// selects the cluster (--kubeconfig, --context): the hub for `upgrade hub`,
// the managed (or hosting) cluster for `upgrade klusterlet`.
func NewCmdUpgrade(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade the hub or the agent of a managed cluster to another version",
		Long: `Upgrade the hub (the ClusterManager) or the agent of a managed cluster (its
Klusterlet) to another version of the ocm-controller image, and wait until it
runs everywhere it should. Upgrade the hub first, then each agent: an agent may
be at most 2 minor versions older than the hub controller, never newer.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdHub(getter, streams), newCmdKlusterlet(getter, streams))
	// upgrade changes the install that hub init and join applied: it
	// writes as the one install field manager (see cli.InstallVerb).
	return cli.InstallVerb(cmd)
}

func newCmdHub(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(TargetHub, getter, streams)
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Upgrade the hub controller and its operator",
		Long: `Upgrade the hub of the current context: set the image fields of the
ClusterManager and the image of its operator Deployment to the ocm-controller
image of --bundle-version (this kubectl-ocm's version by default) in
--image-registry, or to --image. Nothing else changes.

With --wait (the default) it then waits, showing progress on stderr, until the
new image runs and the ClusterManager is Available, or stops with the cause the
Deployment or the ClusterManager gives. The upgrade is refused when it would
break the supported version skew with the agents or this kubectl-ocm, unless
--force; nothing is changed when the hub names the image already.

See docs/operations.md#upgrading.`,
		Example: cli.Examples(`
			# Upgrade the hub of context hub to this kubectl-ocm's version and wait
			kubectl ocm upgrade hub --context hub

			# Upgrade it to v0.2.0, pulled from a mirror
			kubectl ocm upgrade hub --bundle-version v0.2.0 --image-registry registry.example.com/mirror

			# Set the image and return at once, reporting as JSON
			kubectl ocm upgrade hub --wait=false -o json

			# Check the skew and have the hub admit the change, changing nothing
			kubectl ocm upgrade hub --bundle-version v0.2.0 --dry-run=server

			# Upgrade from a private registry, with the credentials of
			# 'docker login registry.example.com'
			kubectl ocm upgrade hub --image-registry registry.example.com/ocm --image-pull-credentials ~/.docker/config.json`),
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	o.AddFlags(cmd)
	return cmd
}

func newCmdKlusterlet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(TargetKlusterlet, getter, streams)
	cmd := &cobra.Command{
		Use:   "klusterlet [NAME]",
		Short: "Upgrade the agent of the current managed cluster and its operator",
		Long: `Upgrade the agent of the managed cluster of the current context: set the image
fields of its Klusterlet (NAME, klusterlet by default; klusterlet-<cluster> on
the hosting cluster in hosted mode) and the image of its operator Deployment to
the ocm-controller image of --bundle-version (this kubectl-ocm's version by
default) in --image-registry, or to --image. Nothing else changes.

With --wait (the default) it then waits, showing progress on stderr, until the
new image runs and the Klusterlet is Available, or stops with the cause. With
--hub-context or --hub-kubeconfig the new agent version is checked against the
hub controller's and refused outside the supported skew, unless --force.

See docs/operations.md#upgrading.`,
		Example: cli.Examples(`
			# Upgrade the agent of context c1 to this kubectl-ocm's version and wait
			kubectl ocm upgrade klusterlet --context c1

			# Upgrade it to v0.2.0, checked against the hub controller of context hub
			kubectl ocm upgrade klusterlet --context c1 --bundle-version v0.2.0 --hub-context hub

			# Upgrade the hosted agent of cluster2 on its hosting cluster
			kubectl ocm upgrade klusterlet klusterlet-cluster2 --context hosting

			# Say what would change, changing nothing
			kubectl ocm upgrade klusterlet --context c1 --bundle-version v0.2.0 --dry-run

			# Upgrade from a private registry, with the credentials of
			# 'docker login registry.example.com'
			kubectl ocm upgrade klusterlet --context c1 --image-registry registry.example.com/ocm --image-pull-credentials ~/.docker/config.json`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteNames(getter, klusterletNames)),
		RunE:              cli.RunE(o),
	}
	o.AddFlags(cmd)
	return cmd
}

// klusterletNames lists the Klusterlets of the cluster, for completion.
func klusterletNames(ctx context.Context, c client.Client, _ string) ([]string, error) {
	return cli.ListNames(ctx, c, &operatorv1.KlusterletList{})
}
