package hub

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// InitOptions are the flags of `kubectl ocm hub init`.
type InitOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Wait waits until the hub controller Deployment is available.
	Wait bool
	// Timeout bounds Wait.
	Timeout time.Duration
	// Image is the ocm-controller image; empty means the image of this
	// version in ImageRegistry. Complete sets it to the image init deploys.
	Image string
	// ImageRegistry is the registry and organization of the default image.
	ImageRegistry string
	// DryRun is none, client (print, contact no cluster) or server (the hub
	// validates and admits, stores nothing).
	DryRun string
	// Output is "", "yaml" or "json".
	Output string
	// AutoApprovedCSRIdentities become the ClusterManager's autoApproveUsers.
	AutoApprovedCSRIdentities []string
	// TokenDuration is the validity of the printed bootstrap token.
	TokenDuration time.Duration
	// ClusterName, when set, binds the printed token to that cluster.
	ClusterName string
	// ConversionWebhookURL, when set, is where the API server calls the
	// add-on conversion webhook instead of through its Service.
	ConversionWebhookURL string
	// OutputFile, when set, is a file to write the manifests init applies
	// to, as --dry-run=client -o yaml prints them (clusteradm's
	// --output-file).
	OutputFile string
	// OutputJoinCommandFile, when set, is a file to write the join command
	// to, as a script whose first argument is the cluster name
	// (clusteradm's --output-join-command-file).
	OutputJoinCommandFile string
	// TLSMinVersion and TLSCipherSuites are --tls-min-version and
	// --tls-cipher-suites; Complete turns them into TLSProfile, the
	// ClusterManager's spec.tlsProfile (nil when both are empty).
	TLSMinVersion   string
	TLSCipherSuites []string
	TLSProfile      *operatorv1.TLSProfile
	// NetworkPolicy sets the ClusterManager's
	// spec.networkPolicyConfiguration; NetworkPolicyMonitoringNamespace and
	// NetworkPolicyAPIServerNamespace its monitoringNamespace and
	// apiServerNamespace, each of which implies NetworkPolicy.
	NetworkPolicy                    bool
	NetworkPolicyMonitoringNamespace string
	NetworkPolicyAPIServerNamespace  string
	// ValuesFile is a file of the hub chart's values (--values-file, or
	// clusteradm's --cluster-manager-values-file); Complete merges them
	// under the flags given into the fields above and values.
	ValuesFile string
	// values are the values of ValuesFile, nil without one.
	values *valuesfile.Hub
	// ImagePullCredentials is the file of --image-pull-credentials, a
	// docker config.json; Complete reads it into pullCredentials.
	ImagePullCredentials string
	pullCredentials      []byte
	// LeaderElection and OperatorLeaderElection are the hub controller's
	// (the ClusterManager's spec.leaderElection) and the ClusterManager
	// operator's leader election timings.
	LeaderElection, OperatorLeaderElection cli.LeaderElectionFlags
}

// NewInitOptions returns InitOptions for the hub getter selects.
func NewInitOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *InitOptions {
	return &InitOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone, ImageRegistry: config.DefaultImageRegistry}
}

// Complete reads --values-file, when given, and fills in each flag not given
// on the command line from it; then it resolves the image init deploys, the
// TLS profile and the pull credentials, returning those it cannot resolve as
// cli.FlagErrors, so that Validate's first mistake is shown with them.
func (o *InitOptions) Complete(cmd *cobra.Command, _ []string) error {
	if cmd != nil {
		if err := o.completeValuesFile(cmd); err != nil {
			return err
		}
	}
	if o.NetworkPolicyMonitoringNamespace != "" || o.NetworkPolicyAPIServerNamespace != "" {
		o.NetworkPolicy = true
	}
	return cli.FlagErrors(o.completeImage(), o.completeTLSProfile(), o.completePullCredentials())
}

// completeImage sets Image to the image init deploys: --image, or the image
// of this version in --image-registry.
func (o *InitOptions) completeImage() error {
	image, err := cli.ResolveImage(o.Image, o.ImageRegistry)
	if err != nil {
		return err
	}
	o.Image = image
	return nil
}

// completeTLSProfile turns --tls-min-version and --tls-cipher-suites into
// the ClusterManager's spec.tlsProfile.
func (o *InitOptions) completeTLSProfile() error {
	p, err := config.TLSProfileFromFlags(o.TLSMinVersion, o.TLSCipherSuites)
	if err != nil {
		return err
	}
	o.TLSProfile = p
	return nil
}

// completePullCredentials reads the docker config.json of
// --image-pull-credentials or, without it, of --values-file.
func (o *InitOptions) completePullCredentials() error {
	var images *valuesfile.Images
	if o.values != nil {
		images = &o.values.Images
	}
	data, err := cli.PullCredentials(o.ImagePullCredentials, images, o.ImageRegistry)
	o.pullCredentials = data
	return err
}

// Validate checks the completed flags, stopping at the first mistake, and
// changes nothing.
func (o *InitOptions) Validate() error {
	if err := cli.ValidateDryRun(o.DryRun); err != nil {
		return err
	}
	switch {
	case o.DryRun == cli.DryRunClient && cli.ValidateOutputFormat(o.Output, cli.ManifestFormats) != nil:
		return fmt.Errorf("%w (the manifests, with --dry-run=client)", cli.ValidateOutputFormat(o.Output, cli.ManifestFormats))
	case o.DryRun == cli.DryRunServer && o.Output != "":
		return errors.New("--output is not supported with --dry-run=server: it lists what the hub admitted")
	case o.DryRun == cli.DryRunNone && cli.ValidateOutputFormat(o.Output, cli.DataFormats) != nil:
		return fmt.Errorf("%w (of hubToken, hubApiserver, expirationTimestamp)", cli.ValidateOutputFormat(o.Output, cli.DataFormats))
	case o.DryRun != cli.DryRunNone && o.Wait:
		return errors.New("--wait cannot be combined with --dry-run: nothing is installed to wait for")
	case o.DryRun != cli.DryRunNone && o.OutputJoinCommandFile != "":
		return errors.New("--output-join-command-file cannot be combined with --dry-run: a dry run issues no token to write")
	}
	if err := cli.ValidateTimeout(o.Timeout); err != nil {
		return err
	}
	if err := validateClusterName(o.ClusterName); err != nil {
		return err
	}
	if err := config.ValidateConversionWebhookURL(o.ConversionWebhookURL); err != nil {
		return fmt.Errorf("--conversion-webhook-url: %w", err)
	}
	if err := o.validateNetworkPolicy(); err != nil {
		return err
	}
	if err := errors.Join(o.LeaderElection.Validate(), o.OperatorLeaderElection.Validate()); err != nil {
		return err
	}
	return validateDuration(o.TokenDuration)
}

// validateNetworkPolicy checks the namespaces of --network-policy-*-namespace
// (either one implies --network-policy: Complete sets it).
func (o *InitOptions) validateNetworkPolicy() error {
	for _, f := range []struct{ flag, ns, fix string }{
		{"--network-policy-monitoring-namespace", o.NetworkPolicyMonitoringNamespace, "name the namespace of your Prometheus"},
		{"--network-policy-apiserver-namespace", o.NetworkPolicyAPIServerNamespace, "name the namespace the hub's API server Pods run in"},
	} {
		if f.ns == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(f.ns); len(msgs) > 0 {
			return fmt.Errorf("%s %q is not a namespace name (%s); %s", f.flag, f.ns, msgs[0], f.fix)
		}
	}
	return nil
}

// networkPolicy is the ClusterManager's spec.networkPolicyConfiguration of
// the flags, nil without --network-policy.
func (o *InitOptions) networkPolicy() *operatorv1.NetworkPolicyConfiguration {
	if !o.NetworkPolicy {
		return nil
	}
	return &operatorv1.NetworkPolicyConfiguration{MonitoringNamespace: o.NetworkPolicyMonitoringNamespace, APIServerNamespace: o.NetworkPolicyAPIServerNamespace}
}

// TokenOptions are the flags of `kubectl ocm hub token`.
type TokenOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Duration is the validity of the bootstrap token.
	Duration time.Duration
	// Output is "", "json" or "yaml".
	Output string
	// ClusterName, when set, binds the token to that cluster.
	ClusterName string
	// DryRun is none, client (say what would be created and requested) or
	// server (have the hub admit the cluster's bootstrap identity too),
	// issuing no token.
	DryRun string
}

// NewTokenOptions returns TokenOptions for the hub getter selects.
func NewTokenOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *TokenOptions {
	return &TokenOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Complete has nothing to fill in.
func (o *TokenOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *TokenOptions) Validate() error {
	if err := cli.ValidateOutputFormat(o.Output, cli.DataFormats); err != nil {
		return err
	}
	if err := cli.ValidateDryRunMode(o.DryRun); err != nil {
		return err
	}
	if o.Output != "" && cli.IsDryRun(o.DryRun) {
		return errors.New("--output and --dry-run exclude each other: a dry run issues no token to print")
	}
	if err := validateClusterName(o.ClusterName); err != nil {
		return err
	}
	return validateDuration(o.Duration)
}

// validateDuration checks a token validity: the TokenRequest API needs at
// least ten minutes.
func validateDuration(d time.Duration) error {
	if d < 10*time.Minute {
		return fmt.Errorf("--duration %s is too short: bootstrap tokens are valid for at least 10m", d)
	}
	return nil
}

// validateClusterName checks --cluster-name, which may be empty.
func validateClusterName(name string) error {
	if name == "" {
		return nil
	}
	if err := identity.ValidateClusterName(name); err != nil {
		return fmt.Errorf("invalid --cluster-name: %w", err)
	}
	return nil
}

// StatusOptions are the flags of `kubectl ocm hub status`.
type StatusOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Output is "", "json" or "yaml".
	Output string
}

// NewStatusOptions returns StatusOptions for the hub getter selects.
func NewStatusOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *StatusOptions {
	return &StatusOptions{IOStreams: streams, getter: getter}
}

// Complete has nothing to fill in.
func (o *StatusOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *StatusOptions) Validate() error { return cli.ValidateOutputFormat(o.Output, cli.DataFormats) }

// CleanOptions are the flags of `kubectl ocm hub clean`.
type CleanOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Force deletes registered ManagedClusters first instead of refusing.
	Force bool
	// Timeout bounds the wait for deleted ManagedClusters to go away.
	Timeout time.Duration
	// DryRun is none, client (say what would be removed) or server (have
	// the hub admit each deletion too), removing nothing.
	DryRun string
}

// NewCleanOptions returns CleanOptions for the hub getter selects.
func NewCleanOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CleanOptions {
	return &CleanOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Complete has nothing to fill in.
func (o *CleanOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *CleanOptions) Validate() error {
	return errors.Join(cli.ValidateDryRunMode(o.DryRun), cli.ValidateTimeout(o.Timeout))
}
