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

// UnjoinOptions are the flags and state of `kubectl ocm unjoin`.
type UnjoinOptions struct {
	// ClusterName is the name the cluster joined as; it must match the
	// Klusterlet's, so that the wrong cluster is not unjoined by mistake.
	ClusterName string
	// Timeout bounds the wait for the removal.
	Timeout time.Duration

	getter genericclioptions.RESTClientGetter
	genericiooptions.IOStreams
}

// NewUnjoinOptions returns options with the defaults.
func NewUnjoinOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *UnjoinOptions {
	return &UnjoinOptions{Timeout: 5 * time.Minute, getter: getter, IOStreams: streams}
}

// AddFlags registers the flags.
func (o *UnjoinOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "The name the cluster joined the hub as.")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait until everything is removed.")
}

// Complete has nothing to fill in; it exists for the Options pattern.
func (o *UnjoinOptions) Complete(_ *cobra.Command, _ []string) error { return nil }

// Validate checks the flags.
func (o *UnjoinOptions) Validate() error {
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
