package hub

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run prints the join command with a fresh bootstrap token.
func (o *TokenOptions) Run(ctx context.Context) error {
	if cli.IsDryRun(o.DryRun) {
		return o.dryRun(ctx)
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	join, err := NewJoinInfo(ctx, c, cfg, o.Duration, o.ClusterName)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, join)
	}
	fmt.Fprintf(o.Out, "On the cluster to register, run:\n    %s\n", join.Command())
	printPinNote(o.Out, join)
	if join.ClusterName != "" {
		fmt.Fprintf(o.Out, "The token may register managed cluster %s only.\n", join.ClusterName)
	}
	fmt.Fprintf(o.Out, "The token expires at %s; -o jsonpath='{.hubToken}' prints it alone.\n", join.ExpirationTimestamp.UTC().Format(time.RFC3339))
	return nil
}

// dryRun says what Run would create and request, issuing no token: with
// --cluster-name the cluster's bootstrap identity, and a token of the
// bootstrap ServiceAccount. On the server, the identity is applied in a
// dry run and the shared ServiceAccount must exist.
func (o *TokenOptions) dryRun(ctx context.Context) error {
	ns, sa := identity.BootstrapServiceAccountOf(o.ClusterName)
	var objs []*unstructured.Unstructured
	if o.ClusterName != "" {
		var err error
		if objs, err = config.ClusterBootstrapObjects(o.ClusterName); err != nil {
			return err
		}
	}
	if o.DryRun == cli.DryRunServer {
		c, cfg, err := cli.NewClient(ctx, o.getter)
		if err != nil {
			return err
		}
		if err := apply.Apply(ctx, c, objs, apply.Options{DryRun: true}); err != nil {
			return fmt.Errorf("create the bootstrap identity of cluster %s on %s (is the hub installed? run `kubectl ocm hub init`): %w", o.ClusterName, cfg.Host, err)
		}
		if o.ClusterName == "" {
			key := client.ObjectKey{Namespace: ns, Name: sa}
			if err := c.Get(ctx, key, &corev1.ServiceAccount{}); err != nil {
				return fmt.Errorf("read ServiceAccount %s/%s on %s (is the hub installed? run `kubectl ocm hub init`): %w", key.Namespace, key.Name, cfg.Host, err)
			}
		}
	}
	suffix := cli.DryRunSuffix(o.DryRun)
	for _, obj := range apply.Sort(objs) {
		fmt.Fprintf(o.Out, "%s applied%s\n", apply.Describe(obj), suffix)
	}
	fmt.Fprintf(o.Out, "A token of ServiceAccount %s/%s, valid for %s, would be issued%s.\n", ns, sa, o.Duration, suffix)
	return nil
}

// printPinNote says what --ca-cert-hash is, or what to do without one.
func printPinNote(out io.Writer, join JoinInfo) {
	if len(join.CACertHashes) == 0 {
		fmt.Fprintln(out, NoPinNote)
		return
	}
	fmt.Fprintln(out, "--ca-cert-hash pins the hub's CA: join checks the hub against it before it sends the token.")
}
