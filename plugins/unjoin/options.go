package unjoin

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Install modes of --mode, as `kubectl ocm join` has them.
const (
	ModeDefault = "default"
	ModeHosted  = "hosted"
)

// Options are the flags and state of `kubectl ocm unjoin`.
type Options struct {
	// ClusterName is the name the cluster joined as; it must match the
	// Klusterlet's, so that the wrong cluster is not unjoined by mistake.
	ClusterName string
	// Timeout bounds the wait for the removal.
	Timeout time.Duration
	// Mode is how the cluster joined: default (the agent runs on the cluster
	// of --context) or hosted (the cluster of --context hosts the agent).
	Mode string
	// ManagedClusterKubeconfig is, in hosted mode, a kubeconfig file of the
	// managed cluster, whose CRDs are then removed when unused too.
	ManagedClusterKubeconfig string
	// DryRun is none, client (say what would be removed) or server (have
	// the cluster admit each deletion too), removing nothing.
	DryRun string

	getter genericclioptions.RESTClientGetter
	genericiooptions.IOStreams
}

// NewOptions returns options with the defaults.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{Timeout: 5 * time.Minute, Mode: ModeDefault, DryRun: cli.DryRunNone, getter: getter, IOStreams: streams}
}

// AddFlags registers the flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "The name the cluster joined the hub as.")
	cli.AddTimeoutFlag(cmd.Flags(), &o.Timeout, o.Timeout, "How long to wait until everything is removed.")
	cmd.Flags().StringVarP(&o.Mode, "mode", "m", o.Mode, "How the cluster joined: default (its agent runs on this cluster) or hosted (this cluster hosts its agent).")
	cmd.Flags().StringVar(&o.ManagedClusterKubeconfig, "managed-cluster-kubeconfig", o.ManagedClusterKubeconfig, "With --mode hosted: a kubeconfig file of the managed cluster, to remove its CRDs when no objects of theirs remain.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says what would be removed and removes nothing; "server" also has the cluster admit each deletion without performing it.`)
}

// Complete has nothing to fill in; it exists for the Options pattern.
func (o *Options) Complete(_ *cobra.Command, _ []string) error { return nil }

// Validate checks the flags, one line per problem.
func (o *Options) Validate() error {
	var errs []error
	if o.ClusterName == "" {
		errs = append(errs, errors.New("--cluster-name is required: the name the cluster joined the hub as"))
	} else if msgs := validation.IsDNS1123Label(o.ClusterName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--cluster-name %q is not a valid DNS label: %s", o.ClusterName, msgs[0]))
	}
	switch o.Mode {
	case ModeDefault:
		if o.ManagedClusterKubeconfig != "" {
			errs = append(errs, errors.New("--managed-cluster-kubeconfig only applies with --mode hosted"))
		}
	case ModeHosted:
	default:
		errs = append(errs, fmt.Errorf("--mode %q is not one of default, hosted", o.Mode))
	}
	return errors.Join(append(errs, cli.ValidateDryRunMode(o.DryRun), cli.ValidateTimeout(o.Timeout))...)
}
