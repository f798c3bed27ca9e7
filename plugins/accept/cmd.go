// Package accept implements `kubectl ocm accept`, the hub administrator's half
// of the double opt-in: it approves the first-join certificate requests of the
// named clusters that come from the bootstrap identity and sets
// spec.hubAcceptsClient on their ManagedClusters.
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
certificate requests made by the bootstrap identity
(system:serviceaccount:open-cluster-management:agent-registration-bootstrap or
system:bootstrap:*) and set spec.hubAcceptsClient to true. Requests from any other
requester are skipped unless listed with --requesters or --skip-approve-check.`,
		Example: cli.Examples(`
			# Accept cluster1 and cluster2
			kubectl ocm accept --clusters cluster1,cluster2 --context hub

			# Accept cluster1, waiting for its request if it has not arrived yet and
			# until it has joined
			kubectl ocm accept --clusters cluster1 --wait`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "Names of the managed clusters to accept.")
	f.BoolVar(&o.Wait, "wait", false, "Wait for each cluster's certificate request when none is pending yet, then until the cluster has joined.")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "How long --wait waits for each cluster.")
	f.BoolVar(&o.SkipApproveCheck, "skip-approve-check", false, "Approve pending requests of the clusters whatever their requester.")
	f.StringSliceVar(&o.Requesters, "requesters", nil, "Further requester user names whose requests are approved.")
	return cmd
}
