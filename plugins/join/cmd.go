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

	# ... and have the agent report where it runs: the hosting cluster, which
	# the hub knows as cluster1; add-ons whose ClusterManagementAddOn enables
	# hostedModeAutoDiscovery are then hosted on cluster1
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster2 --mode hosted --managed-cluster-kubeconfig cluster2.kubeconfig --context hosting --report-hosting-cluster --management-cluster-name cluster1

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

	# Pass the agent a TLS profile of TLS 1.3 only (spec.tlsProfile of the Klusterlet)
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --tls-min-version VersionTLS13

	# Pull the agent image of this version from a mirror
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --image-registry registry.example.com/mirror

	# Pull the agent and add-on images from a private registry with the
	# credentials of 'docker login registry.example.com'
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --image-registry registry.example.com/ocm --image-pull-credentials ~/.docker/config.json

	# Print what would be installed, without installing it, and apply it with
	# kubectl (twice on a new cluster: the Klusterlet needs its CRD established first)
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --dry-run=client -o yaml > cluster1.yaml
	kubectl apply --server-side -f cluster1.yaml

	# Keep a copy of the manifests installed (it holds the token: only its owner reads it)
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --cluster-name cluster1 --output-file cluster1.yaml

	# Install with the values file the klusterlet Helm chart takes (the agent's
	# and the operator's placement, resources, security contexts, ...); a flag
	# given wins over the file
	kubectl ocm join --hub-token <token> --hub-apiserver https://hub.example.com:6443 --ca-cert-hash sha256:<hash> --values-file klusterlet-values.yaml

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

join first checks, installing nothing if a check fails, that the hub answers,
that it is the hub (its CA matches --ca-cert-hash, or --ca-file), that it
accepts the token, and that the cluster name is free. Only then does it send the
token, and install the Klusterlet operator and the Klusterlet; the agent
registers the cluster, and a hub admin accepts it with
'kubectl ocm accept --clusters NAME'.

--mode hosted runs the agent on the cluster of --context for the cluster of
--managed-cluster-kubeconfig; --report-hosting-cluster has the agent report
where it runs, for add-ons that discover their hosting cluster. --dry-run=client -o yaml prints the objects for
'kubectl apply' or a GitOps tool. Repeated --hub-apiserver and --hub-token name
standby hubs; --add-hub adds them to a cluster that has joined.

See docs/install.md#kubectl-ocm-join and docs/operations.md#standby-hubs.`,
		Example: joinExample,
		Args:    cobra.NoArgs,
		RunE:    cli.RunE(o),
	}
	o.AddFlags(cmd)
	// join applies the agent's install, which a re-run and upgrade apply
	// again: it writes as the one install field manager (see
	// cli.InstallVerb).
	return cli.InstallVerb(cmd)
}
