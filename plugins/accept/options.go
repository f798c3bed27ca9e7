package accept

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Options are the flags of `kubectl ocm accept`.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Clusters are the clusters to accept.
	Clusters []string
	// Wait waits for pending requests and for the clusters to join.
	Wait bool
	// Timeout bounds each wait.
	Timeout time.Duration
	// SkipApproveCheck approves requests whatever their requester.
	SkipApproveCheck bool
	// Requesters are further trusted requesters.
	Requesters []string
	// CSRs, when set, are the only requests to approve: the one agent's
	// among several (accept refuses to guess).
	CSRs []string
	// Rejoin approves a new registration of a cluster accepted already,
	// which replaces its agent.
	Rejoin bool

	// approved are the requests Run approved, by name.
	approved map[string]bool
	// approvedKeys are the keys (csr.Request.Key) of the requests Run
	// approved, by cluster: the key of its agent to record.
	approvedKeys map[string][]string
	// shownKeys are the clusters whose agent's key on record Run showed.
	shownKeys map[string]bool
	// hub is the hub's auto-approval while accept waits for a request;
	// nil otherwise.
	hub *hubApproval
	// acceptedBy is the user Run accepts the clusters as, which they
	// record; empty when the hub could not say.
	acceptedBy string
	// DryRun is none, client (say what would be approved and set) or
	// server (have the hub admit the approvals and the change too),
	// changing nothing.
	DryRun string
}

// NewOptions returns Options for the hub getter selects.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Clusters returns what `kubectl ocm accept --clusters ... --wait
// --timeout` does, on the hub getter selects: the command tree
// (plugins/root) hands it to the verbs that accept what they made, since
// no verb imports another.
func Clusters(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) func(ctx context.Context, clusters []string, timeout time.Duration) error {
	return func(ctx context.Context, clusters []string, timeout time.Duration) error {
		o := NewOptions(getter, streams)
		o.Clusters, o.Wait, o.Timeout = clusters, true, timeout
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(ctx)
	}
}

// Complete trims and deduplicates the cluster names.
func (o *Options) Complete(*cobra.Command, []string) error {
	var names []string
	for _, n := range o.Clusters {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	o.Clusters = names
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if len(o.Clusters) == 0 {
		return errors.New("no cluster to accept: name them with --clusters, e.g. --clusters cluster1,cluster2")
	}
	for _, n := range o.Clusters {
		if err := identity.ValidateClusterName(n); err != nil {
			return fmt.Errorf("--clusters: %w", err)
		}
	}
	if o.Wait && cli.IsDryRun(o.DryRun) {
		return errors.New("--wait and --dry-run exclude each other: a dry run accepts nothing to wait for")
	}
	return errors.Join(cli.ValidateDryRunMode(o.DryRun), cli.ValidateTimeout(o.Timeout))
}

// trust is whom the approval of a first join trusts besides the bootstrap
// identities.
func (o *Options) trust() csr.FirstJoinTrust {
	return csr.FirstJoinTrust{Requesters: o.Requesters, AnyRequester: o.SkipApproveCheck}
}
