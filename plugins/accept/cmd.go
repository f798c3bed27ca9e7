// Package accept implements `kubectl ocm accept`, the hub administrator's half
// of the double opt-in: it approves the first-join certificate requests of the
// named clusters that the shared approval policy (pkg/registration/csr)
// allows, and sets spec.hubAcceptsClient on their ManagedClusters.
package accept

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdAccept returns `kubectl ocm accept`. getter selects the hub.
func NewCmdAccept(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "accept --clusters NAME[,NAME...]",
		Short: "Accept managed clusters that asked to join the hub",
		Long: `Accept managed clusters on the hub of the current context: approve their pending
certificate requests and set spec.hubAcceptsClient to true. The ManagedCluster
records who accepted it, as the hub knows you, and when, in the annotations
kubectl-ocm.io/accepted-by and kubectl-ocm.io/accepted-at.

A request is approved only when it is an agent certificate request for the
cluster it is labeled with, filed by a bootstrap identity (or, with
--requesters, one you name); every skipped request is named with the reason,
and every approved one with its requester, agent id and key fingerprint. When a
cluster's requests come from more than one requester or key, accept approves
none and lists them: --csr names the one to approve. A cluster that has joined
keeps its agent: a new registration of it needs --rejoin. The ManagedCluster
records the key of the agent whose request accept approved in the annotation
kubectl-ocm.io/agent-key-sha256 (the hub moves it to each renewal's key), and
accept shows that key beside each request's: a request with another key is
another agent's, and the hub's auto-approval registers an accepted cluster
again only with the key on record. With --wait, accept
waits for the cluster's first request and then for its join; when the hub's
auto-approval (or anyone else) accepts the cluster meanwhile, it says so and
only waits for the join. A request that arrives while it waits from a
requester the ClusterManager auto-approves (autoApproveUsers) is the hub's:
accept approves it only if the hub has not within 30 seconds.

See docs/operations.md#kubectl-ocm-accept for the full approval rule.`,
		Example: cli.Examples(`
			# Accept cluster1 and cluster2
			kubectl ocm accept --clusters cluster1,cluster2 --context hub

			# Accept cluster1, waiting for its request if it has not arrived yet and
			# until it has joined
			kubectl ocm accept --clusters cluster1 --wait

			# Approve only the named request of cluster1, when several are pending
			kubectl ocm accept --clusters cluster1 --csr cluster1-x7k2p

			# cluster1's agent was reinstalled: approve its new registration
			kubectl ocm accept --clusters cluster1 --rejoin --wait

			# Say which requests would be approved, changing nothing
			kubectl ocm accept --clusters cluster1 --dry-run`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "Names of the managed clusters to accept.")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	f.BoolVar(&o.Wait, "wait", false, "Wait for each cluster's certificate request when none is pending yet, then until the cluster has joined.")
	cli.AddTimeoutFlag(f, &o.Timeout, 5*time.Minute, "How long --wait waits for each cluster.")
	f.BoolVar(&o.SkipApproveCheck, "skip-approve-check", false, "Approve pending requests of the clusters whatever their requester (their content is still checked).")
	f.StringSliceVar(&o.Requesters, "requesters", nil, "Further requester user names whose requests are approved.")
	f.StringSliceVar(&o.CSRs, "csr", nil, "Approve only these certificate requests (by name) of the clusters: the agent's, when accept lists several it will not choose between.")
	f.BoolVar(&o.Rejoin, "rejoin", false, "Approve a new registration of a cluster accepted already (its agent reinstalled), which replaces its agent.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says which requests would be approved and which clusters accepted, changing nothing; "server" also has the hub admit each approval and change without making it.`)
	return cmd
}
