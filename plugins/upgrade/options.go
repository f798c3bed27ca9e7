package upgrade

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// What an upgrade changes: the hub (the ClusterManager) or the agent of a
// managed cluster (a Klusterlet).
const (
	TargetHub        = "hub"
	TargetKlusterlet = "klusterlet"
)

// Options are the flags and state of `kubectl ocm upgrade hub|klusterlet`.
type Options struct {
	// Target is TargetHub or TargetKlusterlet.
	Target string
	// Name is the name of the ClusterManager or Klusterlet.
	Name string
	// Image is the whole ocm-controller image to run (--image).
	Image string
	// ImageRegistry is where the image of BundleVersion is pulled from.
	ImageRegistry string
	// BundleVersion is the version to run; empty means this kubectl-ocm's.
	BundleVersion string
	// Wait makes the upgrade wait until the new version runs everywhere.
	Wait bool
	// Timeout bounds that wait.
	Timeout time.Duration
	// Output is "" (a summary), json or yaml.
	Output string
	// Force upgrades even when the result breaks the version skew policy.
	Force bool
	// HubKubeconfig and HubContext select the hub whose controller version a
	// Klusterlet upgrade is checked against; both empty skips that check.
	HubKubeconfig, HubContext string
	// DryRun is none, client (say what would change) or server (have the
	// cluster admit the changes too), changing nothing and waiting for
	// nothing.
	DryRun string
	// ImagePullCredentials is the file of --image-pull-credentials, a
	// docker config.json; Complete reads it into pullCredentials.
	ImagePullCredentials string
	pullCredentials      []byte

	getter genericclioptions.RESTClientGetter
	genericiooptions.IOStreams
}

// NewOptions returns options for target with the defaults.
func NewOptions(target string, getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	o := &Options{Target: target, ImageRegistry: config.DefaultImageRegistry, Wait: true, Timeout: 5 * time.Minute, DryRun: cli.DryRunNone, getter: getter, IOStreams: streams}
	o.Name = operatorv1.ClusterManagerName
	if target == TargetKlusterlet {
		o.Name = operatorv1.KlusterletName
	}
	return o
}

// AddFlags registers the flags of the target.
func (o *Options) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	what := map[string]string{TargetHub: "the hub controller and the cluster-manager operator", TargetKlusterlet: "the agent and the klusterlet operator"}[o.Target]
	cli.AddImageFlags(f, &o.Image, &o.ImageRegistry, what)
	cli.AddImagePullCredentialsFlag(f, &o.ImagePullCredentials, operatorv1.OperatorNamespace)
	f.StringVar(&o.BundleVersion, "bundle-version", "", "The version to upgrade to, such as v0.2.0: the image is <image-registry>/"+config.ControllerImageName+":<bundle-version>. Default: this kubectl-ocm's version, "+version.Version+".")
	f.BoolVar(&o.Wait, "wait", o.Wait, "Wait until the new version runs everywhere it should: the operator has acted on the change and every Deployment it manages rolled out, available.")
	cli.AddTimeoutFlag(f, &o.Timeout, o.Timeout, "How long --wait waits.")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints a summary.", cli.ReportFormats)
	f.BoolVar(&o.Force, "force", false, "Upgrade even when the versions would break the supported version skew (agents at most "+
		fmt.Sprint(version.MaxAgentMinorSkew)+" minor versions older than the hub controller, never newer; kubectl-ocm within "+fmt.Sprint(version.MaxClientMinorSkew)+" minor version of it).")
	if o.Target == TargetKlusterlet {
		f.StringVar(&o.HubContext, "hub-context", "", "The kubeconfig context of the hub, to check the new agent version against the hub controller's. Without it or --hub-kubeconfig, that check is skipped.")
		f.StringVar(&o.HubKubeconfig, "hub-kubeconfig", "", "A kubeconfig file of the hub, to check the new agent version against the hub controller's (its current context, or --hub-context).")
	}
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" checks the version skew and says what would change, changing nothing; "server" also has the cluster admit the changes without storing them. Neither waits.`)
}

// Complete takes the Klusterlet's name from the argument, if any, chooses
// the image to run and reads the pull credentials, returning what it cannot
// resolve as cli.FlagErrors, so that Validate's mistakes are shown with it.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	if name := cli.FirstArg(args); name != "" {
		o.Name = name
	}
	errs := []error{o.completeImage()}
	if data, err := cli.ReadImagePullCredentials(o.ImagePullCredentials); err != nil {
		errs = append(errs, err)
	} else {
		o.pullCredentials = data
	}
	return cli.FlagErrors(errs...)
}

// completeImage sets Image to the image to run: --image, or the image of
// --bundle-version (by default this kubectl-ocm's version) in
// --image-registry.
func (o *Options) completeImage() error {
	var errs []error
	switch {
	case o.Image != "" && o.BundleVersion != "":
		errs = append(errs, errors.New("--image and --bundle-version both choose the image: give one of them"))
	case o.BundleVersion != "":
		if _, ok := version.Release(o.BundleVersion); !ok {
			errs = append(errs, fmt.Errorf("--bundle-version %q is not a release version: give one such as v0.2.0", o.BundleVersion))
		}
	}
	ver := o.BundleVersion
	if ver == "" {
		ver = version.Version
	}
	if image, err := cli.ResolveVersionImage(o.Image, o.ImageRegistry, ver); err != nil {
		errs = append(errs, err)
	} else {
		o.Image = image
	}
	return errors.Join(errs...)
}

// Validate checks the completed flags, one line per problem, and changes
// nothing.
func (o *Options) Validate() error {
	errs := []error{cli.ValidateOutputFormat(o.Output, cli.ReportFormats)}
	if o.Wait {
		errs = append(errs, cli.ValidateTimeout(o.Timeout))
	}
	errs = append(errs, cli.ValidateDryRunMode(o.DryRun))
	return errors.Join(errs...)
}
