package hub

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run prints the join command with a fresh bootstrap token.
func (o *TokenOptions) Run(cmd *cobra.Command) error {
	cfg, err := o.getter.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	join, err := cli.NewJoinInfo(cmd.Context(), cfg, o.Duration)
	if err != nil {
		return err
	}
	if o.Output == "json" {
		return cli.PrintJSON(o.Out, join)
	}
	fmt.Fprintf(o.Out, "token=%s\nPlease log on the cluster to register and run:\n    %s\n", join.HubToken, join.Command())
	return nil
}
