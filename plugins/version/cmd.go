// Package version implements `kubectl ocm version`: the plugin's version and,
// from a reachable hub, the versions of the hub controller and of every
// managed cluster's agent, judged against the supported version skew
// (pkg/version).
package version

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

var versionExample = cli.Examples(`
	# The plugin's version, the hub controller's and every agent's, with skew warnings
	kubectl ocm version --context hub

	# The plugin's version only, without asking a hub
	kubectl ocm version --client

	# Everything as JSON, for scripts (the warnings are in .warnings)
	kubectl ocm version -o json`)

// NewCmdVersion returns the `version` command. getter selects the hub.
func NewCmdVersion(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of kubectl-ocm, the hub controller and the agents",
		Long: fmt.Sprintf(`Print the version of kubectl-ocm and, when the hub of the current context (or
--context) is reachable, the version of its hub controller and of the agent of
every managed cluster, as the running components report them: the hub
controller in the ClusterManager's %s condition, each agent
in the %s claim of its ManagedCluster.

It warns on stderr when a version is outside the supported skew: an agent may
be up to %d minor versions older than the hub controller and never newer, and
kubectl-ocm within %d minor version of the hub controller either way.
Development builds are shown but not judged. An unreachable hub is a warning,
not a failure.`, pkgversion.ConditionHubControllerVersion, pkgversion.AgentVersionClaim, pkgversion.MaxAgentMinorSkew, pkgversion.MaxClientMinorSkew),
		Example: versionExample,
		Args:    cobra.NoArgs,
		RunE:    cli.RunE(o),
	}
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints text and a table of the managed clusters.", cli.ReportFormats)
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "Print the plugin's version only, without asking the hub.")
	return cmd
}
