package version

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("--output %q is not supported: use json or yaml", o.Output)
}
