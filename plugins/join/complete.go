package join

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Complete reads the files of the flags and resolves what the flags name:
// the hubs, the image, the CA pins, the proxy, the pull credentials and the
// TLS profile, and the managed cluster's context name. A file it cannot
// read stops join at once (--values-file, --ca-file, --proxy-ca-file); a
// flag it cannot resolve comes back in cli.FlagErrors, so that Validate's
// errors are shown with it.
func (o *Options) Complete(cmd *cobra.Command, _ []string) error {
	if cmd != nil {
		local := cmd.LocalNonPersistentFlags()
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if local.Lookup(f.Name) != nil {
				o.changed = append(o.changed, f.Name)
			}
		})
		if err := o.completeValuesFile(cmd); err != nil {
			return err
		}
	}
	if err := o.completeHubs(); err != nil {
		return err
	}
	if o.CAFile != "" {
		data, err := os.ReadFile(o.CAFile)
		if err != nil {
			return fmt.Errorf("read --ca-file: %w", err)
		}
		o.hubCA = data
	}
	if err := o.completeProxy(); err != nil {
		return err
	}
	if raw, err := o.getter.ToRawKubeConfigLoader().RawConfig(); err == nil {
		o.contextName = raw.CurrentContext
		if cf, ok := o.getter.(*genericclioptions.ConfigFlags); ok && cf.Context != nil && *cf.Context != "" {
			o.contextName = *cf.Context
		}
	}
	if o.NetworkPolicyMonitoringNamespace != "" {
		o.NetworkPolicy = true
	}
	errs := []error{o.completePins(), o.completeProxyURL()}
	if !o.AddHub {
		// --add-hub installs no agent: the image, its pull credentials
		// and the TLS profile do not apply (Validate refuses their flags).
		errs = append(errs, o.completeImage(), o.completePullCredentials(), o.completeTLSProfile())
	}
	return cli.FlagErrors(errs...)
}

// completePins parses --ca-cert-hash into pins.
func (o *Options) completePins() error {
	pins, err := certs.ParsePins(o.CACertHashes)
	if err != nil {
		return fmt.Errorf("--ca-cert-hash: %w", err)
	}
	o.pins = pins
	return nil
}

// completeImage sets Image to the image join deploys: --image, or the image
// of this version in --image-registry.
func (o *Options) completeImage() error {
	image, err := cli.ResolveImage(o.Image, o.ImageRegistry)
	if err != nil {
		return err
	}
	o.Image = image
	return nil
}

// completePullCredentials reads the docker config.json of
// --image-pull-credentials or, without it, of --values-file.
func (o *Options) completePullCredentials() error {
	var images *valuesfile.Images
	if o.values != nil {
		images = &o.values.Images
	}
	data, err := cli.PullCredentials(o.ImagePullCredentials, images, o.ImageRegistry)
	o.pullCredentials = data
	return err
}

// completeTLSProfile turns --tls-min-version and --tls-cipher-suites into
// the Klusterlet's spec.tlsProfile.
func (o *Options) completeTLSProfile() error {
	p, err := config.TLSProfileFromFlags(o.TLSMinVersion, o.TLSCipherSuites)
	if err != nil {
		return err
	}
	o.tlsProfile = p
	return nil
}
