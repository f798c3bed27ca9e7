// Package importcmd implements `kubectl ocm import`: the hub administrator
// asks the hub's cluster importer to install the Klusterlet on a cluster,
// with a credential of that cluster, instead of running `kubectl ocm join`
// on it. It writes the cluster's ManagedCluster and import Secret
// (pkg/importer) and waits for the importer's condition.
package importcmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// AcceptFunc accepts clusters on the hub and waits for them to join, as
// `kubectl ocm accept --wait` does (accept.Clusters).
type AcceptFunc func(ctx context.Context, clusters []string, timeout time.Duration) error

// NewCmdImport returns `kubectl ocm import`. getter selects the hub;
// acceptClusters is what --accept runs.
func NewCmdImport(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, acceptClusters AcceptFunc) *cobra.Command {
	o := NewOptions(getter, streams)
	o.accept = acceptClusters
	cmd := &cobra.Command{
		Use:   "import CLUSTER --managed-cluster-kubeconfig FILE",
		Short: "Have the hub install the agent on a cluster, with a credential of that cluster",
		Long: `Import a cluster from the hub of the current context: create its ManagedCluster
(when there is none) and the import Secret auto-import-secret in its namespace,
holding a kubeconfig of the cluster. The hub's cluster importer (feature gate
ClusterImporter) installs the Klusterlet operator and Klusterlet on the cluster
with that credential, as 'kubectl ocm join' would, and deletes the Secret once
done (unless --keep-secret). The agent then registers with a bootstrap token
bound to CLUSTER; accept it with 'kubectl ocm accept' (or --accept here) unless
its bootstrap identity is auto-approved.

With --values-file, import also writes the klusterlet chart's values into
Secret cluster-import-config, which the importer applies over its own when the
ClusterManager lists renderer render-from-config-secret: another hub address or
proxy (bootstrapHubKubeConfig), images, the registration driver, the agent's
placement and resources.

The kubeconfig's context (--managed-cluster-context, or its current one) must
carry its credential itself: a token or a client certificate, certificates
embedded or in files that are read now. A user that runs a command (exec, an
auth provider), skips TLS verification, goes through a proxy or impersonates is
refused. The credential needs the rights to install the agent (cluster-admin).

See docs/importing.md.`,
		Example: cli.Examples(`
			# Import cluster2 with the current context of its kubeconfig, and wait
			kubectl ocm import cluster2 --managed-cluster-kubeconfig cluster2.kubeconfig --wait

			# Import it, accept it and wait until it is available
			kubectl ocm import cluster2 --managed-cluster-kubeconfig ~/.kube/config --managed-cluster-context cluster2 --accept --wait

			# Import it with values of the klusterlet chart: its agent reaches the hub
			# through a proxy (the values' bootstrapHubKubeConfig) with the token driver
			kubectl ocm import cluster2 --managed-cluster-kubeconfig cluster2.kubeconfig --values-file cluster2-values.yaml --wait

			# Print the ManagedCluster and import Secret for a GitOps repository
			# (the Secret holds the credential: store it encrypted)
			kubectl ocm import cluster2 --managed-cluster-kubeconfig cluster2.kubeconfig --dry-run=client -o yaml`),
		Args: cobra.ExactArgs(1),
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "managed-cluster-kubeconfig", "", "A kubeconfig of the cluster to import, whose credential may install the agent (cluster-admin).")
	f.StringVar(&o.Context, "managed-cluster-context", "", "The context of --managed-cluster-kubeconfig to use. Default: its current context.")
	f.StringVar(&o.ValuesFile, "values-file", "", "A YAML file of the klusterlet Helm chart's values (config/charts/klusterlet/values.yaml) to install the cluster with: the hub's importer applies them over its own (images, a bootstrapHubKubeConfig with its own hub address, proxy or token, the registration driver, the agent's placement). Written into Secret cluster-import-config; needs renderer render-from-config-secret on the hub.")
	f.BoolVar(&o.KeepSecret, "keep-secret", false, "Keep the import Secret after the import (it is used again only when its content changes).")
	f.BoolVar(&o.Accept, "accept", false, "Accept the cluster once the import succeeded: approve its agent's request and set hubAcceptsClient, as 'kubectl ocm accept' does (implies waiting).")
	f.BoolVar(&o.Wait, "wait", false, "Wait until the importer reports the import (with --accept, until the cluster has joined).")
	cli.AddTimeoutFlag(f, &o.Timeout, 5*time.Minute, "How long --wait waits.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	cli.AddOutputFlag(cmd, &o.Output, "Output format with --dry-run: yaml or json (the objects import writes).", []string{"yaml", "json"})
	return cmd
}
