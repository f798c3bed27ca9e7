package hub

import (
	"context"
	"fmt"
	"io"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run prints the join command with a fresh bootstrap token.
func (o *TokenOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	join, err := cli.NewJoinInfo(ctx, c, cfg, o.Duration, o.ClusterName)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printData(o.Out, o.Output, join)
	}
	fmt.Fprintf(o.Out, "token=%s\nPlease log on the cluster to register and run:\n    %s\n", join.HubToken, join.Command())
	if join.ClusterName != "" {
		fmt.Fprintf(o.Out, "The token may register managed cluster %s only.\n", join.ClusterName)
	}
	return nil
}

// printData writes v as json or yaml.
func printData(out io.Writer, format string, v any) error {
	if format == "yaml" {
		return cli.PrintYAML(out, v)
	}
	return cli.PrintJSON(out, v)
}
