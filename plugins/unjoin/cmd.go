// Package unjoin implements `kubectl ocm unjoin`: it removes everything
// `kubectl ocm join` installed on a managed cluster and says what remains on
// the hub.
package unjoin

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

var unjoinExample = cli.Examples(`
	# Remove the agent of cluster1 from the cluster of context c1
	kubectl ocm unjoin --cluster-name cluster1 --context c1

	# Remove the hosted agent of cluster2 from the hosting cluster, and the
	# CRDs from cluster2 when no objects of theirs remain
	kubectl ocm unjoin --cluster-name cluster2 --mode hosted --context hosting --managed-cluster-kubeconfig cluster2.kubeconfig

	# Say what would be removed from the cluster of context c1, removing nothing
	kubectl ocm unjoin --cluster-name cluster1 --context c1 --dry-run`)

// NewCmdUnjoin returns the `kubectl ocm unjoin` command. getter selects the
// managed cluster.
func NewCmdUnjoin(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "unjoin --cluster-name NAME",
		Short: "Remove the agent from the current managed cluster",
		Long: `Remove everything 'kubectl ocm join' installed on the cluster of the current
context: the agent Deployment, its Secrets and RBAC, its namespace and the
Klusterlet. The managed-cluster CRDs are removed only when no objects of theirs
remain. The ManagedCluster and its namespace on the hub are kept; the command
prints how to remove them.

With --mode hosted, the cluster of --context is the hosting cluster: unjoin
removes namespace klusterlet-NAME with the agent and the Klusterlet
klusterlet-NAME there, and, given --managed-cluster-kubeconfig, the unused
CRDs from the managed cluster. It shows on stderr what it still waits to be
removed.`,
		Example: unjoinExample,
		Args:    cobra.NoArgs,
		RunE:    cli.RunE(o),
	}
	o.AddFlags(cmd)
	// unjoin changes and removes the agent's install that join applied: it
	// writes as the one install field manager (see cli.InstallVerb).
	return cli.InstallVerb(cmd)
}
