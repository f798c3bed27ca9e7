package unjoin

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Options are the flags and state of `kubectl ocm unjoin`.
type Options struct {
	// ClusterName is the name the cluster joined as; it must match the
	// Klusterlet's, so that the wrong cluster is not unjoined by mistake.
	ClusterName string
	// Timeout bounds the wait for the removal.
	Timeout time.Duration

	getter genericclioptions.RESTClientGetter
	genericiooptions.IOStreams
}

// NewOptions returns options with the defaults.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{Timeout: 5 * time.Minute, getter: getter, IOStreams: streams}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "The name the cluster joined the hub as.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait until everything is removed.")
}

// Complete has nothing to fill in; it exists for the Options pattern.
func (o *Options) Complete(_ *cobra.Command, _ []string) error { return nil }

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.ClusterName == "" {
		return errors.New("--cluster-name is required: the name the cluster joined the hub as")
	}
	if msgs := validation.IsDNS1123Label(o.ClusterName); len(msgs) > 0 {
		return fmt.Errorf("--cluster-name %q is not a valid DNS label: %s", o.ClusterName, msgs[0])
	}
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}
