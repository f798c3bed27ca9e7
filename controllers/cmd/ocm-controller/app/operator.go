package app

import (
	"context"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
)

// NewOperatorCommand returns `ocm-controller operator`, the parent of the
// operators that install the product from its custom resources.
func NewOperatorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run an operator that installs the hub or the agent from its custom resource",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewOperatorHubCommand(), NewKlusterletOperatorCommand())
	return cmd
}

// mode is the options of an ocm-controller mode: completed from the
// environment, validated, then run until SIGTERM or SIGINT.
type mode interface {
	Complete() error
	Validate() error
	Run(ctx context.Context) error
}

// runMode returns the RunE of the command of mode o.
func runMode(o mode) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(ctrl.SetupSignalHandler())
	}
}
