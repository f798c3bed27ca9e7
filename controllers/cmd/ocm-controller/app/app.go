// Package app builds the ocm-controller command tree. It is the only package
// that wires the controller domains (registration, work, placement, add-on)
// together.
package app

import (
	"io"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// NewCommand returns the ocm-controller root command.
func NewCommand(out io.Writer) *cobra.Command {
	// The hub tunnel's library logs every connection through logrus at
	// Info; the tunnel's own code logs what matters through the manager's
	// logger, so only the library's warnings and errors are kept.
	logrus.SetLevel(logrus.WarnLevel)
	cmd := &cobra.Command{
		Use:          "ocm-controller",
		Short:        "Run the kubectl-ocm hub controllers or managed-cluster agent",
		SilenceUsage: true,
	}
	cmd.SetOut(out)
	cmd.AddCommand(newVersionCommand(out), NewHubCommand(), NewTunnelCommand(), NewImporterCommand(), NewAgentCommand(), NewOperatorCommand())
	return cmd
}

func newVersionCommand(out io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the ocm-controller version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return version.Print(out, "ocm-controller", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml. Empty prints one line.")
	return cmd
}
