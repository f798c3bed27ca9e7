// Package credentials implements `kubectl ocm credentials`, a client-go exec
// credential plugin (KEP-5339's exec provider of the hub tunnel,
// pkg/hubtunnel): it prints, as an ExecCredential, the hub credential it
// runs with, so that a kubeconfig whose server is a managed cluster's proxy
// path on the hub reaches that cluster as the same hub user without holding
// a copy of the credential.
package credentials

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdCredentials returns the `credentials` command. getter selects the
// hub credential (--kubeconfig, --context, ...).
func NewCmdCredentials(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "credentials",
		Short: "Print your hub credential as an ExecCredential, for kubeconfig exec plugins",
		Long: fmt.Sprintf(`Print the hub credential of the current context as an ExecCredential
(%s) on stdout, as a client-go exec credential plugin
does: a token, or a client certificate and key, with its expiry. A kubeconfig
whose server is a managed cluster's path on the hub (see 'kubectl ocm proxy
--help') and whose user runs 'kubectl-ocm credentials' reaches that cluster as
your hub user without holding a copy of your credential. It is the exec plugin
of the %s access provider of ClusterProfiles.

The credential goes only to the hub it belongs to: under client-go the exec
section must set provideClusterInfo: true, and the plugin refuses a server
other than the hub's proxy path. It never prompts (set interactiveMode: Never).

See docs/proxy.md#kubectl-ocm-credentials for where the credential comes from
and the rules it follows.`, hubtunnel.ExecAPIVersion, hubtunnel.AccessProviderName),
		Example: cli.Examples(`
			# Print the ExecCredential of the hub user of context hub
			kubectl ocm credentials --context hub

			# Make the user of a kubeconfig written by 'kubectl ocm proxy kubeconfig' run this
			# plugin with the hub user of context hub of ~/.kube/config, instead of holding a copy
			kubectl ocm proxy kubeconfig cluster1 --context hub --output-file cluster1.kubeconfig
			kubectl config delete-user cluster1-via-hub --kubeconfig cluster1.kubeconfig
			kubectl config set-credentials cluster1-via-hub --kubeconfig cluster1.kubeconfig \
			  --exec-api-version=client.authentication.k8s.io/v1 --exec-interactive-mode=Never \
			  --exec-provide-cluster-info=true \
			  --exec-command=kubectl-ocm --exec-arg=credentials --exec-arg=--context=hub \
			  --exec-env=KUBECONFIG=$HOME/.kube/config
			kubectl --kubeconfig cluster1.kubeconfig get namespaces`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	return cmd
}
