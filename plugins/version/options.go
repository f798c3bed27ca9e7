package version

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// Options holds the flags of `kubectl ocm version`.
type Options struct {
	genericiooptions.IOStreams
	// Output is the output format: "", "json" or "yaml".
	Output string
}

// NewOptions returns Options writing to streams.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams}
}

// Validate checks the flags.
func (o *Options) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("--output %q is not supported: use json or yaml", o.Output)
}

// Run prints the version.
func (o *Options) Run() error {
	return pkgversion.Print(o.Out, "kubectl-ocm", o.Output)
}
