// Package version implements `kubectl ocm version`.
package version

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

var versionExample = cli.Examples(`
	# Print the plugin version
	kubectl ocm version

	# Print it as JSON
	kubectl ocm version -o json`)

// NewCmdVersion returns the `version` command.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(streams)
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the kubectl-ocm version",
		Example: versionExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml. Empty prints one line.")
	return cmd
}
