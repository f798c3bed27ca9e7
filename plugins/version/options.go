package version

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Options holds the flags of `kubectl ocm version`.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Output is the output format: "", "json" or "yaml".
	Output string
	// ClientOnly skips the hub (--client).
	ClientOnly bool
}

// NewOptions returns Options for the hub getter selects, writing to streams.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams, getter: getter}
}

// Complete has nothing to fill in.
func (o *Options) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *Options) Validate() error {
	return cli.ValidateOutputFormat(o.Output, cli.ReportFormats)
}
