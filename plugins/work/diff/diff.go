// Package diff implements `kubectl ocm work diff`: what new manifests for
// a ManifestWork or a ManifestWorkReplicaSet would change on each cluster.
// The hub cannot reach the clusters, so the command writes a ManifestWork in
// ReportDiff mode next to each work, lets each cluster's agent compute the
// difference, and prints the agents' reports.
package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/text"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// OfLabel on a ManifestWork in ReportDiff mode names the work whose
// new manifests `kubectl ocm work diff` compares; the command deletes it
// when done.
const OfLabel = "work.kubectl-ocm.io/diff-of"

// ErrDiffers is returned, silently, when the new manifests would change a
// cluster: the command exits 1, as kubectl diff does.
var ErrDiffers = errors.New("the new manifests would change the cluster")

// Options are the flags and arguments of `kubectl ocm work diff`.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork, or the ManifestWorkReplicaSet with
	// ReplicaSet.
	Name string
	// Filenames and Recursive are the new manifests (-f, -R).
	Filenames []string
	Recursive bool
	// Clusters are the clusters whose work NAME to compare (--clusters, else
	// an explicit -n); empty: every cluster that has it.
	Clusters []string
	// ReplicaSet compares ManifestWorkReplicaSet NAME of Namespace on every
	// cluster it has a work on.
	ReplicaSet bool
	Namespace  string
	// Timeout bounds the wait for the agents' reports.
	Timeout time.Duration
	// Output is json or yaml; empty prints the diffs.
	Output string

	// payload is the new manifests as a large payload, when they are over
	// the limit of one ManifestWork.
	payload *workpayload.Payload
}

func NewCmdDiff(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, getter: getter, Timeout: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "diff NAME -f FILE|DIR [--clusters CLUSTER[,CLUSTER...] | --replicaset -n NAMESPACE]",
		Short: "Show, per cluster, what new manifests for a work would change, without changing anything",
		Long: `Show what replacing the manifests of ManifestWork NAME (or of
ManifestWorkReplicaSet NAME, with --replicaset) with those read from -f would
change on each cluster, without changing anything: each cluster's work agent
computes it from a temporary ManifestWork in ReportDiff mode (annotation
` + workv1.ApplyModeAnnotation + `), and the command prints the reports as
unified diffs, one per group of clusters that agree. Manifests the new set
leaves out are listed as deleted, unless the work orphans them.

New manifests over the limit of one ManifestWork (500 KiB) go to the agents
as a large payload, its chunks written to each cluster's namespace first, as
work create writes them; a work that is a large payload is compared by the
manifests of its chunks.

The exit status is 0 when nothing would change, 1 when something would, and
another failure otherwise, as kubectl diff's.`,
		Example: cli.Examples(`
			# What app-v2.yaml would change where work web runs
			kubectl ocm work diff web -f app-v2.yaml

			# Only on cluster1 and cluster2
			kubectl ocm work diff web -f app-v2.yaml --clusters cluster1,cluster2

			# On every cluster of ManifestWorkReplicaSet web in namespace apps, overrides included
			kubectl ocm work diff web -f app-v2.yaml --replicaset -n apps`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: workargs.CompleteWorks(getter),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := cli.RunE(o)(cmd, args)
			if errors.Is(err, ErrDiffers) {
				cmd.SilenceErrors = true
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Files or directories of the new manifests (repeatable; - reads stdin).")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Also read the subdirectories of directories given with -f.")
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The clusters whose work NAME to compare, comma separated; default: every cluster that has it.")
	f.BoolVarP(&o.ReplicaSet, "replicaset", "r", false, "NAME is a ManifestWorkReplicaSet of -n NAMESPACE: compare on every cluster it has a work on.")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the agents' reports.")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json or yaml. Empty prints the diffs.", cli.ReportFormats)
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

// Complete records NAME, and the namespace: the clusters' (an explicit -n)
// or the set's.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	if o.ReplicaSet {
		o.Namespace, _, err = workargs.NamespaceClusters(o.getter, nil, false)
		return err
	}
	_, o.Clusters, err = workargs.NamespaceClusters(o.getter, o.Clusters, true)
	return err
}

// Validate checks the flags.
func (o *Options) Validate() error {
	errs := []error{workargs.ValidateName(o.Name)}
	if o.ReplicaSet && len(o.Clusters) > 0 {
		errs = append(errs, errors.New("--clusters and --replicaset exclude each other: a ManifestWorkReplicaSet is compared on every cluster it has a work on"))
	}
	if len(o.Clusters) > 0 {
		errs = append(errs, workargs.ValidateClusters(o.Clusters, "--clusters"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: give a positive duration", o.Timeout))
	}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats))...)
}

// Run writes the ReportDiff works, waits for their reports, prints them and
// deletes the works.
func (o *Options) Run(ctx context.Context) error {
	manifests, err := o.readManifests()
	if err != nil {
		return err
	}
	// New manifests over the limit of one ManifestWork go to the agents as a
	// large payload, as work create sends them.
	if o.payload, err = workpayload.Pack(o.Name, manifests); err != nil {
		return err
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	mapper, err := o.getter.ToRESTMapper()
	if err != nil {
		return err
	}
	var targets []*diffTarget
	if o.ReplicaSet {
		targets, err = o.setTargets(ctx, c, manifests)
	} else {
		targets, err = o.workTargets(ctx, c, manifests)
	}
	if err != nil {
		return err
	}
	defer o.cleanup(ctx, c, targets)
	if err := o.writeProbes(ctx, c, cfg.Host, targets); err != nil {
		return err
	}
	if err := o.wait(ctx, c, targets); err != nil {
		return err
	}
	report := o.report(targets, mapper)
	if o.Output != "" {
		if err := cli.PrintData(o.Out, o.Output, report); err != nil {
			return err
		}
	} else {
		printDiffs(o.Out, report)
	}
	return outcome(report)
}

// readManifests reads and checks the new manifests of -f.
func (o *Options) readManifests() ([]workv1.Manifest, error) {
	manifests, err := cli.ReadManifests(o.Filenames, o.Recursive, o.In)
	if err != nil {
		return nil, err
	}
	if err := cli.ValidateManifests(manifests, workpayload.SizeLimit(manifests)); err != nil {
		return nil, err
	}
	raw := make([]workv1.Manifest, 0, len(manifests))
	for _, m := range manifests {
		data, err := json.Marshal(m.Object.Object)
		if err != nil {
			return nil, fmt.Errorf("encode manifest %s: %w", m.Object.GetName(), err)
		}
		raw = append(raw, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}})
	}
	return raw, nil
}

// outcome is the command's result once the report is printed: an error
// naming the manifests that could not be compared, ErrDiffers when the new
// manifests would change a cluster, else nil.
func outcome(report *Report) error {
	var failed []string
	differs := false
	for _, cd := range report.Clusters {
		differs = differs || cd.Differs
		for _, m := range cd.Manifests {
			if m.Result == workv1.DiffReasonFailed {
				failed = append(failed, fmt.Sprintf("%s: %s %s: %s", cd.Cluster, m.Kind, m.Name, m.Diff))
			}
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("%d manifests could not be compared: %s", len(failed), text.JoinLimited(failed, "; ", 5))
	case differs:
		return ErrDiffers
	}
	return nil
}

// NewOptions returns the options of a diff against the hub getter selects,
// for callers that build them without a command line.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams, getter: getter, Timeout: 2 * time.Minute}
}
