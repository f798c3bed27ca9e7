// Package hub implements `kubectl ocm hub`: init installs the hub (CRDs,
// RBAC, admission policies, the hub controller) and prints the join command,
// token prints it again, status reports on the installation and clean removes
// it.
package hub

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// NewCmdHub returns `kubectl ocm hub` with its subcommands. getter selects
// the hub cluster (--kubeconfig, --context).
func NewCmdHub(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Install, inspect and remove the hub",
		Long: `Install, inspect and remove the hub control plane on the cluster of the current
context (--context).`,
		Args: cobra.NoArgs,
	}
	// init, token and clean write the hub's install, which every release
	// applies as the one install field manager (see cli.InstallVerb).
	cmd.AddCommand(cli.InstallVerb(newCmdInit(getter, streams)), cli.InstallVerb(newCmdToken(getter, streams)), newCmdStatus(getter, streams), cli.InstallVerb(newCmdClean(getter, streams)), newCmdRotateCA(getter, streams))
	return cmd
}

func newCmdInit(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewInitOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install the hub on the current cluster and print the join command",
		Long: `Install the hub on the cluster of the current context: the Open Cluster
Management CRDs, namespaces, the bootstrap identity managed clusters join with,
the admission policies, the ClusterManager and the hub controller. The
manifests are applied with server-side apply (field manager kubectl-ocm), so
running init again upgrades the hub.

It then prints the 'kubectl ocm join' command, with a fresh bootstrap token and
--ca-cert-hash, the pin of the hub's CA that join checks before it sends the
token. --dry-run=client -o yaml contacts no cluster and prints every object init
applies, in order, for 'kubectl apply' or a GitOps tool.

See docs/install.md#kubectl-ocm-hub-init for what is installed and upgraded.`,
		Example: cli.Examples(`
			# Install the hub on context hub and wait until its controller is available
			kubectl ocm hub init --context hub --wait

			# Print every manifest init would apply, without touching the cluster,
			# and apply them with kubectl (twice on a new hub: the ClusterManager
			# needs its CRD established first)
			kubectl ocm hub init --dry-run=client -o yaml > hub.yaml
			kubectl apply --server-side -f hub.yaml

			# Have the hub validate and admit an upgrade without storing anything
			kubectl ocm hub init --dry-run=server

			# Run the hub controller image of this version from a mirror
			kubectl ocm hub init --image-registry registry.example.com/mirror

			# Pull the images from a private registry with the credentials of
			# 'docker login registry.example.com'
			kubectl ocm hub init --image-registry registry.example.com/ocm --image-pull-credentials ~/.docker/config.json

			# Print a join command whose token may register cluster1 only
			kubectl ocm hub init --cluster-name cluster1

			# Keep the manifests applied and a join script, then join cluster1 with it
			kubectl ocm hub init --output-file hub.yaml --output-join-command-file join.sh
			sh join.sh cluster1 --context cluster1

			# Approve first-join requests of the bootstrap ServiceAccount automatically
			kubectl ocm hub init --auto-approved-csr-identities ` + identity.BootstrapUser + `

			# Serve the conversion webhook and hub tunnel with TLS 1.3 only
			kubectl ocm hub init --tls-min-version VersionTLS13

			# Allow TLS 1.2 clients with two ECDSA suites only
			kubectl ocm hub init --tls-cipher-suites TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384

			# Confine the hub controller with NetworkPolicies: Prometheus in namespace
			# monitoring may scrape it, and only the API server Pods of kube-system
			# reach its webhook
			kubectl ocm hub init --network-policy-monitoring-namespace monitoring --network-policy-apiserver-namespace kube-system

			# Install with the values file the hub Helm chart takes (operator Pod
			# placement, resources, security contexts, pull secrets, ...); a flag
			# given wins over the file
			kubectl ocm hub init --values-file hub-values.yaml --wait`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	o.addFlags(cmd)
	return cmd
}

// addFlags adds init's flags to cmd.
func (o *InitOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.Wait, "wait", false, "Wait until the hub controller Deployment is available.")
	cli.AddTimeoutFlag(f, &o.Timeout, 5*time.Minute, "How long --wait waits, and how long an upgrade waits for the conversion webhook before migrating stored add-on objects.")
	f.StringVar(&o.ConversionWebhookURL, "conversion-webhook-url", "",
		"An https URL (ending in "+conversion.Path+") at which the API server calls the add-on conversion webhook, for hubs whose API server cannot reach Services (see docs/install.md).")
	cli.AddImageFlags(f, &o.Image, &o.ImageRegistry, "the hub controller")
	cli.AddImagePullCredentialsFlag(f, &o.ImagePullCredentials, config.OperatorNamespace)
	cli.AddDryRunFlag(cmd, &o.DryRun)
	cli.AddOutputFlag(cmd, &o.Output, "Output format. With --dry-run=client: yaml or json (the manifests). Otherwise: json, yaml or jsonpath=TEMPLATE (of hubToken, hubApiserver, expirationTimestamp, caCertHashes).", cli.DataFormats)
	f.StringVar(&o.ClusterName, "cluster-name", "", "Print a join command whose token may register only this cluster (see 'kubectl ocm hub token --help').")
	f.StringSliceVar(&o.AutoApprovedCSRIdentities, "auto-approved-csr-identities", nil,
		"Bootstrap identities whose first-join requests the hub approves and accepts by itself (see docs/operations.md#what-auto-approval-trusts).")
	f.DurationVar(&o.TokenDuration, "duration", 24*time.Hour, "How long the printed bootstrap token stays valid.")
	cli.AddTLSFlags(f, &o.TLSMinVersion, &o.TLSCipherSuites, "ClusterManager", "the hub controller's conversion webhook and hub tunnel server", "ClusterManager operator")
	f.BoolVar(&o.NetworkPolicy, "network-policy", false, "Have the ClusterManager operator apply NetworkPolicies to the hub controller and the hub tunnel: the webhook and tunnel ports accept the API server's calls, their other ports no connection from Pods (see docs/operations.md#network-policies). Sets the ClusterManager's spec.networkPolicyConfiguration; running init again without this flag or the two that imply it removes the field, and the operator the policies.")
	f.StringVar(&o.NetworkPolicyMonitoringNamespace, "network-policy-monitoring-namespace", "", "The namespace whose Pods may reach the hub controller's metrics port (spec.networkPolicyConfiguration.monitoringNamespace); implies --network-policy.")
	f.StringVar(&o.NetworkPolicyAPIServerNamespace, "network-policy-apiserver-namespace", "", "The namespace the API server's webhook calls come from, for API servers that run as Pods in it (spec.networkPolicyConfiguration.apiServerNamespace); implies --network-policy. Default: the webhook port accepts every source, as it must where the API server runs on the host network.")
	valuesfile.AddFlag(f, &o.ValuesFile, clusterManagerValuesFileFlag, "hub", "the hub")
	cli.AddLeaderElectionFlags(f, &o.LeaderElection, "", "the hub controller", "the ClusterManager's spec.leaderElection", leaderelect.Hub)
	cli.AddLeaderElectionFlags(f, &o.OperatorLeaderElection, "operator-", "the ClusterManager operator", "its Deployment's flags", leaderelect.Hub)
	f.StringVar(&o.OutputFile, "output-file", "", "Also write the manifests init applies to this file, as --dry-run=client -o yaml prints them; it is written before anything is applied (owner-only with --image-pull-credentials).")
	f.StringVar(&o.OutputJoinCommandFile, "output-join-command-file", "",
		`Also write the join command to this file, an owner-only shell script taking the cluster name and more join flags: 'sh FILE cluster1 --context cluster1'.`)
}

func newCmdToken(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewTokenOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the join command with a fresh bootstrap token",
		Long: `Print the 'kubectl ocm join' command with a fresh, time-limited bootstrap token
of the hub of the current context.

Without --cluster-name any cluster may join with the token, under any name, as
in OCM. With --cluster-name the token belongs to a bootstrap identity of that
cluster alone: it can register that cluster only, so a leaked token cannot
register or impersonate any other. The command carries --ca-cert-hash, the pin
of the hub's CA, which join checks before it sends the token.

See docs/install.md#kubectl-ocm-hub-token for the identities and the pin.`,
		Example: cli.Examples(`
			# Print the join command, valid for 24 hours
			kubectl ocm hub token --context hub

			# A token that may register cluster1 only, valid for one hour, as JSON
			kubectl ocm hub token --cluster-name cluster1 --duration 1h -o json

			# The bare token alone, for a script
			kubectl ocm hub token --cluster-name cluster1 -o jsonpath='{.hubToken}'

			# The pin of the hub's CA alone, for join's --ca-cert-hash
			kubectl ocm hub token -o jsonpath='{.caCertHashes[0]}'

			# Check that the hub would create cluster1's bootstrap identity, issuing no token
			kubectl ocm hub token --cluster-name cluster1 --dry-run=server

			# Make every token printed so far stop working
			kubectl ocm hub token revoke`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cmd.Flags().DurationVar(&o.Duration, "duration", 24*time.Hour, "How long the bootstrap token stays valid.")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json, yaml or jsonpath=TEMPLATE (of hubToken, hubApiserver, expirationTimestamp, clusterName, caCertHashes); jsonpath='{.hubToken}' prints the bare token. Empty prints the join command.", cli.DataFormats)
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", "", "Issue a token that may register only this cluster.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says what would be created and whose token it would be, contacting no cluster; "server" also has the hub admit it unstored. Neither issues a token.`)
	cmd.AddCommand(newCmdTokenRevoke(getter, streams))
	return cmd
}

func newCmdStatus(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewStatusOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Report the hub controller, the ClusterManager conditions, the clusters and the CRDs",
		Example: cli.Examples(`
			# Summarize the hub
			kubectl ocm hub status --context hub

			# The same as JSON
			kubectl ocm hub status -o json`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json, yaml or jsonpath=TEMPLATE. Empty prints a summary.", cli.DataFormats)
	return cmd
}

func newCmdClean(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCleanOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove everything hub init installed",
		Long: `Remove everything 'kubectl ocm hub init' installed, in reverse order, and say
what was removed. Removing the CRDs removes every Open Cluster Management object
on the hub, so clean refuses while ManagedClusters exist; with --force it first
deletes them and waits until the hub controller has cleaned up after each.`,
		Example: cli.Examples(`
			# Remove the hub once every cluster has left
			kubectl ocm hub clean --context hub

			# Remove it even though clusters are still registered
			kubectl ocm hub clean --force

			# Say what would be removed, removing nothing
			kubectl ocm hub clean --dry-run`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "Delete registered ManagedClusters first instead of refusing.")
	cli.AddTimeoutFlag(cmd.Flags(), &o.Timeout, 5*time.Minute, "How long --force waits for ManagedClusters to be cleaned up.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says what would be removed (refusing as clean does while ManagedClusters exist) and removes nothing; "server" also has the hub admit each deletion without performing it.`)
	return cmd
}
