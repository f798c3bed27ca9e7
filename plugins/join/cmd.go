// Package join implements `kubectl ocm join`: it checks that the hub can be
// reached and trusted and accepts the bootstrap token, then installs the agent
// on the managed cluster, and optionally waits until the cluster has joined.
package join

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

var joinExample = cli.Examples(`
	# Join the cluster of the current context to a hub, with the command that
	# 'kubectl ocm hub init' or 'kubectl ocm hub token' printed: --ca-cert-hash
	# pins the hub's CA, which join checks before it sends the token
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1

	# Verify the hub with its CA bundle instead (clusteradm's --ca-file), for a
	# hub that prints no pin
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-file hub-ca.crt --cluster-name cluster1

	# Join the cluster of context c1 and wait until the hub has its registration
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --context c1 --wait

	# ... or until the hub admin has accepted it and it is available
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --context c1 --wait-accepted

	# Hosted mode: run the agent of cluster2 on the hosting cluster of context
	# hosting; it manages cluster2 through the kubeconfig file
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster2 --mode hosted --managed-cluster-kubeconfig cluster2.kubeconfig --context hosting

	# Add-on agents get ServiceAccount tokens of the hub instead of certificates
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --addon-kubeclient-registration-auth token

	# The agent reaches the hub through an HTTP proxy (an https proxy with
	# --proxy-ca-file for its CA); it keeps the proxy across certificate rotation
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --proxy-url http://proxy.example.com:3128

	# Join a hub that signs no client certificates (such as EKS): the agent
	# authenticates with short-lived ServiceAccount tokens the hub hands out once accepted
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --registration-auth token

	# Join with a standby hub: the agent registers with hub2 when hub1 has not
	# renewed the cluster's lease for 5 minutes (hub2 accepts it as hub1 did)
	kubectl ocm join --cluster-name cluster1 --hub-apiserver https://hub1.example.com:6443 --hub-token <token1> --hub-apiserver https://hub2.example.com:6443 --hub-token <token2> --ca-cert-hash sha256:<hash1> --ca-cert-hash sha256:<hash2> --hub-connection-timeout-seconds 300

	# Add a standby hub to a cluster that has joined already
	kubectl ocm join --add-hub --hub-apiserver https://hub2.example.com:6443 --hub-token <token2> --ca-cert-hash sha256:<hash2> --context cluster1

	# Pull the agent image of this version from a mirror
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --image-registry registry.example.com/mirror

	# Print what would be installed, without installing it, and apply it with
	# kubectl (twice on a new cluster: the Klusterlet needs its CRD established first)
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --dry-run=client -o yaml > cluster1.yaml
	kubectl apply --server-side -f cluster1.yaml

	# Keep a copy of the manifests installed (it holds the token: only its owner reads it)
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --output-file cluster1.yaml

	# Have the cluster check what would be installed, without storing it
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --dry-run=server`)

// NewCmdJoin returns the `kubectl ocm join` command. getter selects the
// managed cluster (--kubeconfig, --context).
func NewCmdJoin(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "join --hub-token TOKEN --hub-apiserver URL --ca-cert-hash sha256:HASH --cluster-name NAME",
		Short: "Join the current cluster to a hub as a managed cluster",
		Long: `Join the cluster of the current context (--context) to a hub.

join first checks, installing nothing if any check fails, that the hub is
reachable, that it is the hub (below), that the hub accepts the token, and that
the cluster name is free.

join verifies the hub before it sends the token, as kubeadm's discovery does.
With --ca-cert-hash sha256:HASH (the pin of the hub's CA, the SHA-256 of its
public key, which 'kubectl ocm hub init' and 'kubectl ocm hub token' print;
kubeadm's --discovery-token-ca-cert-hash format), join reads the hub's CA bundle
anonymously, with no credential (ConfigMap kube-public/kube-root-ca.crt, else a
kubeadm hub's kube-public/cluster-info, else the certificates of the TLS
handshake), trusts only a CA whose pin was given, and checks that it signs the
hub's serving certificate. With --ca-file it trusts that file's CAs instead, as
clusteradm does. Only then does it send the token, over a connection verified
with that CA, and that CA is the one the agent trusts. A hub that presents no CA
of the pin gets nothing. Without either flag join refuses;
--insecure-skip-ca-verification trusts whatever CA the hub presents (still read
before the token is sent) and prints a warning with its pin. It then installs the agent: the
namespace open-cluster-management-agent, the bootstrap kubeconfig, the Klusterlet
and the klusterlet-agent Deployment. The agent registers the cluster; a hub admin
then accepts it with 'kubectl ocm accept --clusters NAME'.

With --mode hosted, the cluster of --context is the hosting cluster: the agent,
its Secrets and the Klusterlet klusterlet-NAME go to namespace klusterlet-NAME
there, and the agent manages the cluster of --managed-cluster-kubeconfig, which
gets only the ClusterClaim and AppliedManifestWork CRDs. join first checks that
the file loads and that the managed cluster answers with it.

--dry-run=client runs the checks and prints what would be installed;
--dry-run=server also has the cluster validate and admit it, storing nothing.
With -o yaml (or -o json, a v1 List) the dry run prints the objects, in install
order, for 'kubectl apply' or a GitOps tool: applied to the cluster of --context
they install the same agent. They hold the bootstrap token (Secret
bootstrap-hub-kubeconfig): keep the file secret. In hosted mode the output also
holds the CRDs that belong on the managed cluster, named on stderr; split the
file, or use the verb.
--wait prints its progress on stderr.

Repeated --hub-apiserver and --hub-token (and --ca-file, once per hub or not
at all) name standby hubs, in order of preference; without --ca-file, each
hub must present a CA of one of the --ca-cert-hash pins. join checks each of them as
it checks the first, writes their bootstrap kubeconfigs to Secrets
bootstrap-hub-kubeconfig-2, -3, ... and lists them after
bootstrap-hub-kubeconfig in the Klusterlet's
spec.registrationConfiguration.bootstrapKubeConfigs. When the agent's hub has
not renewed the cluster's lease for --hub-connection-timeout-seconds (it is
unreachable, or no longer accepts the cluster), the agent registers with the
next hub that answers; accept the cluster there as on the first hub, or let
that hub accept it automatically. The workloads the first hub's works applied
stay in place: the standby hub's works of the same names take them over.
--add-hub adds standby hubs to a cluster that has joined already.

--singleton only records mode Singleton (SingletonHosted with --mode hosted) in
the Klusterlet; the agent is the same one Deployment in every mode.

--addon-kubeclient-registration-auth chooses how add-on agents get their hub
credential: csr (the default: the agent files a certificate request per add-on,
which the hub approves) or token (the hub's add-on manager creates
ServiceAccount <addon>-agent in the cluster's namespace, and the agent requests
its tokens and refreshes them). It is recorded in the Klusterlet's
spec.registrationConfiguration.addOnKubeClientRegistrationDriver.`,
		Example: joinExample,
		Args:    cobra.NoArgs,
		RunE:    cli.RunE(o),
	}
	o.AddFlags(cmd)
	return cmd
}
