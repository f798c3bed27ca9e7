// Package proxy implements `kubectl ocm proxy`: the hub tunnel from the
// user's side. kubeconfig writes a kubeconfig that reaches one managed
// cluster's API server through the hub (pkg/hubtunnel) with the user's own
// hub credential, and checks that the cluster answers through it.
package proxy

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdProxy returns `kubectl ocm proxy` with its subcommands. flags
// select the hub and the hub user (--kubeconfig, --context, --user, ...).
func NewCmdProxy(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Reach managed clusters' API servers through the hub",
		Long: fmt.Sprintf(`Reach the API server of a managed cluster through the hub, with your own hub
credential: the hub serves the aggregated API %s, and each
cluster's agent keeps a tunnel to it (unless the Klusterlet turns the %s
feature gate off). A request to the hub's API server under
  %s
reaches cluster CLUSTER's API server; only the hub need be reachable.

Two RBACs decide: on the hub, the verbs of managedclusters/proxy in API group
%s for the cluster's name; on the managed cluster, what its own
RBAC gives User %s<hub user> and Groups %s<hub group>.

See docs/proxy.md for who may do what and how it works.`,
			hubtunnel.GroupVersion, hubTunnelFeature, hubtunnel.ProxyPath("CLUSTER"),
			hubtunnel.Group, hubtunnel.IdentityPrefix, hubtunnel.IdentityPrefix),
		Example: "  # On the hub: let hub user alice use cluster1 through the hub\n" +
			cli.Examples(GrantScript("cluster1", "alice")) + "\n\n" + cli.Examples(`
			# On cluster1: let hub user alice read namespace team-a
			kubectl create rolebinding hub-alice-view --clusterrole=view --user=`+hubtunnel.IdentityPrefix+`alice -n team-a --context cluster1

			# Write a kubeconfig for cluster1 through the hub, and use it
			kubectl ocm proxy kubeconfig cluster1 --context hub --output-file cluster1.kubeconfig
			kubectl --kubeconfig cluster1.kubeconfig get pods -n team-a`),
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdKubeconfig(flags, streams))
	return cmd
}

func newCmdKubeconfig(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewKubeconfigOptions(flags, streams)
	cmd := &cobra.Command{
		Use:   "kubeconfig CLUSTER",
		Short: "Write a kubeconfig that reaches a managed cluster through the hub",
		Long: fmt.Sprintf(`Write a kubeconfig that reaches managed cluster CLUSTER through the hub of the
current context (--context), to stdout or to --output-file.

Its one context, CLUSTER%s, has the hub's API server URL followed by
  %s
with the hub's CA, and a copy of your own hub user: no credential is created,
and --output-file writes it readable by its owner only. With -n (--namespace),
the context's namespace is that namespace.

ManagedCluster CLUSTER must exist on the hub. Unless --check=false, the command
then asks CLUSTER for its version through the kubeconfig and says on stderr
whether it answers, or why not; the kubeconfig is written either way. See
docs/proxy.md for the permissions on both sides.`, contextSuffix, hubtunnel.ProxyPath("CLUSTER")),
		Example: cli.Examples(`
			# Write a kubeconfig for cluster1 through the hub of context hub, and use it
			kubectl ocm proxy kubeconfig cluster1 --context hub --output-file cluster1.kubeconfig
			kubectl --kubeconfig cluster1.kubeconfig get namespaces

			# With namespace team-a, next to the kubeconfigs kubectl reads
			kubectl ocm proxy kubeconfig cluster1 --context hub -n team-a --output-file ~/.kube/cluster1-via-hub
			KUBECONFIG=$HOME/.kube/config:$HOME/.kube/cluster1-via-hub kubectl get configmaps --context cluster1-via-hub

			# Print it to stdout without asking cluster1 whether it answers
			kubectl ocm proxy kubeconfig cluster1 --context hub --check=false`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cli.FirstArgOnly(cli.CompleteClusters(flags)),
		RunE:              cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.OutputFile, "output-file", "", "Write the kubeconfig to this file, readable by its owner only (it holds your credential), instead of stdout.")
	f.BoolVar(&o.Check, "check", true, "Ask the cluster for its version through the kubeconfig and report on stderr whether it answers; the kubeconfig is written either way.")
	return cmd
}
