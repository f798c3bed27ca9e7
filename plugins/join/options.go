package join

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Install modes of --mode.
const (
	ModeDefault = "default"
	ModeHosted  = "hosted"
)

// maxHostedClusterName is the longest cluster name whose hosted namespace
// klusterlet-<cluster> is still a valid namespace name.
const maxHostedClusterName = 63 - len("klusterlet-")

// Options are the flags and state of `kubectl ocm join`.
type Options struct {
	// HubToken is the bootstrap token.
	HubToken string
	// HubAPIServer is the hub's API server URL.
	HubAPIServer string
	// StandbyHubs are the hubs of the second and later --hub-apiserver,
	// --hub-token and --ca-file, in order of preference: the agent
	// registers with the next one when its hub has been lost for
	// HubConnectionTimeoutSeconds (standby.go).
	StandbyHubs []Hub
	// HubConnectionTimeoutSeconds is how long the agent tolerates losing
	// its hub before it moves to the next one; 0 leaves the Klusterlet's
	// default, 600.
	HubConnectionTimeoutSeconds int32
	// AddHub adds the hubs of --hub-apiserver and --hub-token to an agent
	// that has joined already, as standby hubs, instead of installing one.
	AddHub bool
	// ClusterName is the name the cluster registers as.
	ClusterName string
	// CAFile is a file with the hub's CA bundle; empty: learn the CA from
	// the hub and check it against CACertHashes (discovery.go).
	CAFile string
	// CACertHashes are the pins of the hub CAs join trusts
	// (certs.ParsePin: sha256:<hex> of the CA's public key, kubeadm's
	// --discovery-token-ca-cert-hash format), for every hub of the flags.
	CACertHashes []string
	// InsecureSkipCAVerification trusts whatever CA the hub presents when
	// neither CAFile nor CACertHashes is given.
	InsecureSkipCAVerification bool
	// Wait waits until the hub has the cluster's registration, as
	// clusteradm's join --wait does.
	Wait bool
	// WaitAccepted waits until the hub has accepted the cluster and it is
	// available.
	WaitAccepted bool
	// Timeout bounds the wait.
	Timeout time.Duration
	// Image is the ocm-controller image of the agent; empty means the image
	// of this version in ImageRegistry. Complete sets it to the image join
	// deploys.
	Image string
	// ImageRegistry is the registry and organization of the default image.
	ImageRegistry string
	// ImagePullCredentials is the file of --image-pull-credentials, a
	// docker config.json; Complete reads it into pullCredentials.
	ImagePullCredentials string
	pullCredentials      []byte
	// Mode is the install mode: default (the agent runs on the managed
	// cluster) or hosted (the agent runs on the cluster of --context, the
	// hosting cluster, and reaches the managed cluster with
	// ManagedClusterKubeconfig).
	Mode string
	// ManagedClusterKubeconfig is the file with the managed cluster's
	// kubeconfig (its current context) in hosted mode.
	ManagedClusterKubeconfig string
	// ReportHostingCluster has the agent report the cluster it runs on in
	// ClusterClaim hosting-cluster.open-cluster-management.io (the
	// Klusterlet's spec.deployOption.reportHostingCluster: Enable): this
	// cluster's name, or ManagementClusterName in hosted mode.
	ReportHostingCluster bool
	// ManagementClusterName is the hub's name for the hosting cluster in
	// hosted mode (the Klusterlet's
	// spec.deployOption.hosted.managementClusterName).
	ManagementClusterName string
	// ForceInternalEndpointLookup takes the hub's address from ConfigMap
	// kube-public/cluster-info instead of --hub-apiserver (kind clusters).
	ForceInternalEndpointLookup bool
	// Singleton records mode Singleton (SingletonHosted in hosted mode) in
	// the Klusterlet's spec.deployOption.mode. The agent is the same one
	// Deployment in every mode.
	Singleton bool
	// ClientCertExpirationSeconds is the requested client certificate lifetime.
	ClientCertExpirationSeconds int32
	// RegistrationAuth is how the agent authenticates to the hub: csr
	// (client certificates) or token (ServiceAccount tokens, for hubs that
	// sign no client certificates).
	RegistrationAuth string
	// AddonKubeClientRegistrationAuth is how add-on agents obtain their
	// credential for the hub's API server: csr (client certificates, the
	// default) or token (ServiceAccount tokens).
	AddonKubeClientRegistrationAuth string
	// AddonTokenExpirationSeconds is the requested lifetime of add-on
	// tokens; 0 leaves the agent's default, a year.
	AddonTokenExpirationSeconds int64
	// ExternalServerURLs are the managed cluster's API server URLs for the hub.
	ExternalServerURLs []string
	// NetworkPolicy sets the Klusterlet's spec.networkPolicyConfiguration,
	// and NetworkPolicyMonitoringNamespace its monitoringNamespace (which
	// implies NetworkPolicy).
	NetworkPolicy                    bool
	NetworkPolicyMonitoringNamespace string
	// ProxyURL is the HTTP(S) proxy through which the agent, and join,
	// reach the hub (proxy.go).
	ProxyURL string
	// ProxyCAFile is a file with the CA bundle of an https ProxyURL.
	ProxyCAFile string
	// Force joins even when a joined cluster of the same name exists on the hub.
	Force bool
	// DryRun is --dry-run: none installs; client prints the objects and
	// installs nothing; server has the cluster validate and admit them
	// without storing them.
	DryRun string
	// PrintFlags holds -o, which prints the objects of a dry run: yaml or
	// json (the manifests) or name.
	PrintFlags *genericclioptions.PrintFlags
	// OutputFile is clusteradm's --output-file: a file that receives the
	// manifests join applies, as --dry-run=client -o yaml prints them,
	// written before anything is applied. It holds the bootstrap token, so
	// only its owner reads it.
	OutputFile string
	// TLSMinVersion and TLSCipherSuites are --tls-min-version and
	// --tls-cipher-suites; Complete turns them into tlsProfile, the
	// Klusterlet's spec.tlsProfile (nil when both are empty).
	TLSMinVersion   string
	TLSCipherSuites []string
	tlsProfile      *operatorv1.TLSProfile
	// ValuesFile is a file of the klusterlet chart's values (--values-file,
	// or clusteradm's --klusterlet-values-file); Complete merges them under
	// the flags given into the fields above and values.
	ValuesFile string
	// values are the values of ValuesFile, nil without one.
	values *valuesfile.Klusterlet
	// ManifestWorkWorkers and AppliedWorkWorkers are the Klusterlet's
	// spec.workConfiguration.workers; 0 leaves them unset.
	ManifestWorkWorkers, AppliedWorkWorkers int32
	// LeaderElection and OperatorLeaderElection are the agent's (the
	// Klusterlet's spec.leaderElection) and the Klusterlet operator's
	// leader election timings.
	LeaderElection, OperatorLeaderElection cli.LeaderElectionFlags

	// hubAPIServers, hubTokens and caFiles are the repeated flags, the
	// first of each for HubAPIServer, HubToken and CAFile; changed names
	// the flags given (Complete).
	hubAPIServers, hubTokens, caFiles []string
	changed                           []string
	// hubCA is the hub's CA bundle from --ca-file, after Complete.
	hubCA []byte
	// pins are CACertHashes in canonical form, after Complete.
	pins []string
	// proxyURL is the parsed --proxy-url, nil without one; proxyCA is
	// the content of --proxy-ca-file.
	proxyURL *url.URL
	proxyCA  []byte
	// contextName names the cluster of --context in messages.
	contextName string
	// managed is the managed cluster in hosted mode, after preflight.
	managed *managedCheck
	// standby are the standby hubs' bootstrap kubeconfigs, after preflight.
	standby []config.StandbyHub

	getter genericclioptions.RESTClientGetter
	genericiooptions.IOStreams
}

// NewOptions returns options with the defaults.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{
		Mode:                            ModeDefault,
		RegistrationAuth:                operatorv1.CSRAuthType,
		AddonKubeClientRegistrationAuth: addonv1alpha1.KubeClientDriverCSR,
		Timeout:                         5 * time.Minute,
		ImageRegistry:                   config.DefaultImageRegistry,
		DryRun:                          cli.DryRunNone,
		PrintFlags:                      genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme),
		getter:                          getter,
		IOStreams:                       streams,
	}
}

// AddFlags registers the flags, with clusteradm's names.
func (o *Options) AddFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&o.hubTokens, "hub-token", nil, "The bootstrap token printed by 'kubectl ocm hub init' or 'kubectl ocm hub token'. Repeat it for each --hub-apiserver, in the same order.")
	fs.StringArrayVar(&o.hubAPIServers, "hub-apiserver", nil, "The hub's API server URL, e.g. https://hub.example.com:6443; repeat it to name standby hubs, in order of preference (see docs/operations.md#standby-hubs).")
	fs.Int32Var(&o.HubConnectionTimeoutSeconds, "hub-connection-timeout-seconds", o.HubConnectionTimeoutSeconds, "With standby hubs: how long the hub may go without renewing the cluster's lease before the agent moves to the next hub; at least 180. Default: 600.")
	fs.BoolVar(&o.AddHub, "add-hub", o.AddHub, "Add the hubs of --hub-apiserver and --hub-token as standby hubs of this already joined cluster; only the hub, CA, cluster name, timeout and proxy flags apply with it.")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "The name this cluster registers as on the hub: a DNS label.")
	fs.StringArrayVar(&o.caFiles, "ca-file", nil, "A file with the hub's CA bundle, which verifies the hub before the token is sent; with standby hubs, once per --hub-apiserver in the same order, or not at all. Without it, give --ca-cert-hash.")
	fs.StringArrayVar(&o.CACertHashes, "ca-cert-hash", nil, "The pin (sha256:<hex>) of the hub's CA that 'kubectl ocm hub init' and 'hub token' print; join verifies the hub with it before sending the token. Repeatable.")
	fs.BoolVar(&o.InsecureSkipCAVerification, "insecure-skip-ca-verification", false, "Join without --ca-cert-hash or --ca-file, trusting whatever CA the hub presents (anyone on the path could take the token); prints a warning with its pin.")
	fs.BoolVar(&o.Wait, "wait", o.Wait, "Wait until the hub has the cluster's registration (its certificate request), showing progress, then say how to accept it, as clusteradm's join --wait does.")
	fs.BoolVar(&o.WaitAccepted, "wait-accepted", o.WaitAccepted, "Wait until the hub has accepted the cluster and it is available, showing progress (someone accepts it on the hub meanwhile).")
	cli.AddTimeoutFlag(fs, &o.Timeout, o.Timeout, "How long --wait or --wait-accepted waits.")
	cli.AddImageFlags(fs, &o.Image, &o.ImageRegistry, "the agent")
	cli.AddImagePullCredentialsFlag(fs, &o.ImagePullCredentials, operatorv1.OperatorNamespace)
	fs.StringVarP(&o.Mode, "mode", "m", o.Mode, "Install mode: default (the agent runs on this cluster) or hosted (the agent runs on this cluster, the hosting cluster, and manages the cluster of --managed-cluster-kubeconfig).")
	fs.StringVar(&o.ManagedClusterKubeconfig, "managed-cluster-kubeconfig", o.ManagedClusterKubeconfig, "With --mode hosted: a kubeconfig file whose current context reaches the managed cluster; it is stored on the hosting cluster as the agent's identity on the managed cluster.")
	fs.BoolVar(&o.ReportHostingCluster, "report-hosting-cluster", o.ReportHostingCluster, "Have the agent report the cluster it runs on in ClusterClaim hosting-cluster.open-cluster-management.io (the Klusterlet's spec.deployOption.reportHostingCluster: Enable): this cluster's name, or with --mode hosted --management-cluster-name. Add-ons whose ClusterManagementAddOn enables hostedModeAutoDiscovery are hosted there (see docs/addons.md#discovering-the-hosting-cluster).")
	fs.StringVar(&o.ManagementClusterName, "management-cluster-name", o.ManagementClusterName, "With --mode hosted: the hub's name for the hosting cluster of --context, a managed cluster of the same hub, which --report-hosting-cluster reports (the Klusterlet's spec.deployOption.hosted.managementClusterName).")
	fs.BoolVar(&o.ForceInternalEndpointLookup, "force-internal-endpoint-lookup", o.ForceInternalEndpointLookup, "Use the hub address from ConfigMap kube-public/cluster-info on the hub instead of --hub-apiserver, for the agent (e.g. kind clusters).")
	fs.BoolVar(&o.Singleton, "singleton", o.Singleton, "Only record mode Singleton (SingletonHosted with --mode hosted) in the Klusterlet's spec.deployOption.mode; the agent is the same in every mode.")
	fs.Int32Var(&o.ClientCertExpirationSeconds, "client-cert-expiration-seconds", o.ClientCertExpirationSeconds, "Requested lifetime of the agent's client certificate in seconds (at least 3600). Default: the hub signer's.")
	fs.StringVar(&o.RegistrationAuth, "registration-auth", o.RegistrationAuth, "How the agent authenticates to the hub: csr (client certificates the hub signs) or token (for hubs that sign none, such as EKS; see docs/operations.md).")
	fs.StringVar(&o.AddonKubeClientRegistrationAuth, "addon-kubeclient-registration-auth", o.AddonKubeClientRegistrationAuth, "How add-on agents get their hub credential: csr (client certificates the hub approves) or token (ServiceAccount tokens; see docs/addons.md).")
	fs.Int64Var(&o.AddonTokenExpirationSeconds, "addon-token-expiration-seconds", o.AddonTokenExpirationSeconds, "With --addon-kubeclient-registration-auth token: the requested lifetime of add-on tokens in seconds (at least 600). Default: a year.")
	fs.StringSliceVar(&o.ExternalServerURLs, "external-server-urls", o.ExternalServerURLs, "This cluster's API server URLs for the hub (https).")
	fs.BoolVar(&o.NetworkPolicy, "network-policy", o.NetworkPolicy, "Have the Klusterlet operator apply NetworkPolicies to the agent's namespace: the agent may reach only DNS, its hub and this cluster's API server, and nothing may reach it (see docs/operations.md#network-policies).")
	fs.StringVar(&o.NetworkPolicyMonitoringNamespace, "network-policy-monitoring-namespace", o.NetworkPolicyMonitoringNamespace, "The namespace whose Pods may reach the agent's metrics port; implies --network-policy.")
	o.addProxyFlags(fs)
	cli.AddTLSFlags(fs, &o.TLSMinVersion, &o.TLSCipherSuites, "Klusterlet", "the agent's hub tunnel connection (the agent serves no TLS: metrics and probes are plain HTTP)", "Klusterlet operator")
	o.addTuningFlags(fs)
	fs.BoolVar(&o.Force, "force", o.Force, "Join even if a joined, available cluster of the same name exists on the hub.")
	valuesfile.AddFlag(fs, &o.ValuesFile, klusterletValuesFileFlag, "klusterlet", "the agent")
	fs.StringVar(&o.OutputFile, "output-file", o.OutputFile, "Also write the manifests join installs to this file, as --dry-run=client -o yaml prints them, readable by its owner only (it holds the bootstrap token); it is written before anything is installed.")
	cli.AddDryRunFlag(cmd, &o.DryRun)
	fs.Lookup("dry-run").Usage = `Check the hub, then install nothing: "client" prints the objects; "server" also has the cluster (and a hosted mode's managed cluster) admit them unstored.`
	o.PrintFlags.AddFlags(cmd)
	fs.Lookup("output").Usage = "With --dry-run: yaml or json print the manifests, name one line per object. Default: one line per object saying what would happen to it."
}

// validateCA checks how join verifies the hubs: --ca-file, --ca-cert-hash
// or, said explicitly, --insecure-skip-ca-verification.
func (o *Options) validateCA() []error {
	var errs []error
	caFile := o.CAFile != "" || len(o.caFiles) > 0
	switch {
	case o.InsecureSkipCAVerification && (caFile || len(o.CACertHashes) > 0):
		errs = append(errs, errors.New("--insecure-skip-ca-verification contradicts --ca-file and --ca-cert-hash, which verify the hub: drop it"))
	case !caFile && len(o.CACertHashes) == 0 && !o.InsecureSkipCAVerification:
		errs = append(errs, fmt.Errorf("join verifies the hub before it sends the token: pass %s; `kubectl ocm hub token` on the hub prints the join command with the pin. --insecure-skip-ca-verification trusts whatever CA the hub presents instead", hubCAFlags))
	}
	return errs
}

// Validate checks the completed flags, one line per problem, and changes
// nothing.
func (o *Options) Validate() error {
	if o.AddHub {
		return o.validateAddHub()
	}
	errs := o.validateStandbyHubs()
	errs = append(errs, o.validateHub()...)
	errs = append(errs, o.validateClusterName()...)
	errs = append(errs, o.validateMode()...)
	errs = append(errs, o.validateRegistration()...)
	errs = append(errs, o.validateNetwork()...)
	errs = append(errs, o.validateProxy()...)
	errs = append(errs, o.validateValuesFile()...)
	errs = append(errs, o.validateTuning()...)
	errs = append(errs, o.validateOutput()...)
	return errors.Join(append(errs, cli.ValidateTimeout(o.Timeout))...)
}

// validateHub checks the first hub: its token, how join verifies it and its
// URL.
func (o *Options) validateHub() []error {
	var errs []error
	if o.HubToken == "" {
		errs = append(errs, errors.New("--hub-token is required: run `kubectl ocm hub token` on the hub to get one"))
	}
	errs = append(errs, o.validateCA()...)
	if o.HubAPIServer == "" {
		errs = append(errs, errors.New("--hub-apiserver is required: the hub's API server URL, as `kubectl ocm hub token` prints it"))
	} else if u, err := url.Parse(o.HubAPIServer); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Errorf("--hub-apiserver %q is not an https URL such as https://hub.example.com:6443", o.HubAPIServer))
	}
	return errs
}

// validateClusterName checks --cluster-name.
func (o *Options) validateClusterName() []error {
	if o.ClusterName == "" {
		return []error{errors.New("--cluster-name is required: the name this cluster registers as on the hub")}
	}
	if err := identity.ValidateClusterName(o.ClusterName); err != nil {
		return []error{fmt.Errorf("--cluster-name: %w", err)}
	}
	return nil
}

// validateMode checks --mode and the flags of hosted mode.
func (o *Options) validateMode() []error {
	var errs []error
	switch o.Mode {
	case ModeDefault:
	case ModeHosted:
		if o.ManagedClusterKubeconfig == "" {
			errs = append(errs, errors.New("--mode hosted needs --managed-cluster-kubeconfig: a kubeconfig file for the managed cluster; --context selects the hosting cluster"))
		}
		if len(o.ClusterName) > maxHostedClusterName {
			errs = append(errs, fmt.Errorf("--cluster-name %q is too long for --mode hosted: at most %d characters, so that namespace %s fits 63", o.ClusterName, maxHostedClusterName, config.HostedKlusterletName("<cluster>")))
		}
	default:
		errs = append(errs, fmt.Errorf("--mode %q is not one of default, hosted", o.Mode))
	}
	if o.ManagedClusterKubeconfig != "" && o.Mode != ModeHosted {
		errs = append(errs, errors.New("--managed-cluster-kubeconfig only applies with --mode hosted"))
	}
	return append(errs, o.validateHostingReport()...)
}

// validateHostingReport checks --report-hosting-cluster and
// --management-cluster-name: in hosted mode the report names the hosting
// cluster, so it needs the hub's name for it, as the Klusterlet CRD's rule
// does.
func (o *Options) validateHostingReport() []error {
	var errs []error
	if o.ManagementClusterName != "" {
		switch {
		case o.Mode != ModeHosted:
			errs = append(errs, errors.New("--management-cluster-name only applies with --mode hosted: in default mode the agent runs on the cluster it manages, and reports --cluster-name"))
		case o.ManagementClusterName == o.ClusterName:
			errs = append(errs, fmt.Errorf("--management-cluster-name %s is --cluster-name: in hosted mode the agent runs on another cluster; name the hosting cluster of --context as the hub knows it", o.ManagementClusterName))
		default:
			if err := identity.ValidateClusterName(o.ManagementClusterName); err != nil {
				errs = append(errs, fmt.Errorf("--management-cluster-name: %w", err))
			}
		}
	}
	if o.ReportHostingCluster && o.Mode == ModeHosted && o.ManagementClusterName == "" {
		errs = append(errs, errors.New("--report-hosting-cluster with --mode hosted needs --management-cluster-name: the hub's name for the hosting cluster of --context, which the agent reports"))
	}
	return errs
}

// validateRegistration checks how the agent and the add-on agents
// authenticate to the hub, and the lifetimes of their credentials.
func (o *Options) validateRegistration() []error {
	var errs []error
	if o.ClientCertExpirationSeconds != 0 && o.ClientCertExpirationSeconds < operatorv1.MinClientCertExpirationSeconds {
		errs = append(errs, fmt.Errorf("--client-cert-expiration-seconds %d is below the minimum of %d", o.ClientCertExpirationSeconds, operatorv1.MinClientCertExpirationSeconds))
	}
	if o.RegistrationAuth != operatorv1.CSRAuthType && o.RegistrationAuth != operatorv1.TokenAuthType {
		errs = append(errs, fmt.Errorf("--registration-auth %q is not one of csr, token", o.RegistrationAuth))
	}
	switch o.AddonKubeClientRegistrationAuth {
	case addonv1alpha1.KubeClientDriverCSR, addonv1alpha1.KubeClientDriverToken:
	default:
		errs = append(errs, fmt.Errorf("--addon-kubeclient-registration-auth %q is not one of csr, token", o.AddonKubeClientRegistrationAuth))
	}
	if o.AddonTokenExpirationSeconds != 0 {
		if o.AddonKubeClientRegistrationAuth != addonv1alpha1.KubeClientDriverToken {
			errs = append(errs, errors.New("--addon-token-expiration-seconds only applies with --addon-kubeclient-registration-auth token"))
		}
		if o.AddonTokenExpirationSeconds < 600 {
			errs = append(errs, fmt.Errorf("--addon-token-expiration-seconds %d is below the TokenRequest minimum of 600", o.AddonTokenExpirationSeconds))
		}
	}
	return errs
}

// validateNetwork checks the namespace of --network-policy-monitoring-namespace
// and the URLs of --external-server-urls.
func (o *Options) validateNetwork() []error {
	var errs []error
	if ns := o.NetworkPolicyMonitoringNamespace; ns != "" {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--network-policy-monitoring-namespace %q is not a namespace name (%s); name the namespace of your Prometheus", ns, msgs[0]))
		}
	}
	for _, u := range o.ExternalServerURLs {
		if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" {
			errs = append(errs, fmt.Errorf("--external-server-urls %q is not an https URL", u))
		}
	}
	return errs
}

// validateOutput checks --dry-run, -o and the waits, which exclude a dry
// run.
func (o *Options) validateOutput() []error {
	errs := []error{cli.ValidateDryRun(o.DryRun), cli.ValidateOutput(o.PrintFlags, "yaml", "json", "name")}
	if cli.Output(o.PrintFlags) != "" && o.DryRun == cli.DryRunNone {
		errs = append(errs, errors.New("-o/--output only applies with --dry-run=client or --dry-run=server"))
	}
	if (o.Wait || o.WaitAccepted) && o.DryRun != cli.DryRunNone {
		errs = append(errs, errors.New("--wait and --wait-accepted exclude --dry-run"))
	}
	return errs
}
