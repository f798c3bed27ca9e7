package app

import "github.com/spf13/cobra"

// NewOperatorCommand returns `ocm-controller operator`, the parent of the
// operators that install the product from its custom resources.
func NewOperatorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run an operator that installs the hub or the agent from its custom resource",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewOperatorHubCommand())
	return cmd
}
