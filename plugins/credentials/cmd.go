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
does. A kubeconfig whose server is a managed cluster's path on the hub (see
'kubectl ocm proxy --help') and whose user runs 'kubectl-ocm credentials'
reaches that cluster as your hub user without holding a copy of your
credential. It is the exec plugin of the %s access provider of
ClusterProfiles.

The hub credential is that of the kubeconfig of --kubeconfig or $KUBECONFIG and
of --context, as for every kubectl command; without a kubeconfig, in a Pod, it
is the Pod's ServiceAccount token. The plugin prints:
- a token, from the kubeconfig's token or token file (read anew each time) or
  the ServiceAccount token file; when the token is a JWT, its exp claim is the
  expirationTimestamp, so that client-go runs the plugin again before it
  expires;
- or a client certificate and key, from the kubeconfig's data or files, with
  the certificate's end of validity as the expirationTimestamp.
A user that is itself an exec plugin or an auth provider (oidc) is run through
client-go, and the token or certificate it gives is printed. Basic
authentication and impersonation (--as) cannot be passed on and are errors.

The credential goes only to the hub it belongs to. Under client-go
(KUBERNETES_EXEC_INFO set) the exec section must use apiVersion %s
and set provideClusterInfo: true, so that client-go names the server the
credential is for; the plugin prints the credential only when that server has
the scheme, host and port of the hub kubeconfig's server (in a Pod with the
ServiceAccount token: the Pod's in-cluster API server, KUBERNETES_SERVICE_HOST
and KUBERNETES_SERVICE_PORT) and a path under %s there (after
the kubeconfig server's own path, if it has one), and refuses otherwise, naming
both. Run by hand, without KUBERNETES_EXEC_INFO, it prints the credential of the
kubeconfig it is given. It never prompts, so set interactiveMode: Never. Nothing
but the ExecCredential goes to stdout; errors go to stderr, with a non-zero exit
status.`, hubtunnel.ExecAPIVersion, hubtunnel.AccessProviderName, hubtunnel.ExecAPIVersion, hubtunnel.APIPath),
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
