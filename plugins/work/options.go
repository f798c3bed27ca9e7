package work

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// updateStrategies are the values of --update-strategy.
var updateStrategies = []string{
	string(workv1.UpdateStrategyTypeUpdate), string(workv1.UpdateStrategyTypeCreateOnly),
	string(workv1.UpdateStrategyTypeServerSideApply), string(workv1.UpdateStrategyTypeReadOnly),
}

// CreateOptions are the flags and arguments of `kubectl ocm work create`.
type CreateOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: yaml, json or name print the ManifestWorks instead
	// of one line per cluster.
	PrintFlags *genericclioptions.PrintFlags
	// Name is the ManifestWork's name in every cluster namespace.
	Name string
	// Filenames are the files and directories of the manifests ("-": stdin).
	Filenames []string
	// Recursive also reads the subdirectories of directories in Filenames.
	Recursive bool
	// Clusters are the managed clusters that get the work.
	Clusters []string
	// Overwrite replaces the manifests of an existing ManifestWork NAME.
	Overwrite bool
	// UpdateStrategy, when set, is the update strategy of every manifest.
	UpdateStrategy string
	// TakeOver, when set, is the work's take-over rule
	// (workv1.TakeOverAnnotation).
	TakeOver string
	// DryRun is none, client (print only) or server (validated and admitted
	// by the hub, not stored).
	DryRun string
	// Rollout holds --placement, --replicaset and the rollout flags.
	Rollout RolloutFlags

	// payload is the split payload of manifests over the limit of one
	// ManifestWork, once packPayload made it.
	payload *workpayload.Payload
}

// NewCreateOptions returns CreateOptions for the hub getter selects.
func NewCreateOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CreateOptions {
	return &CreateOptions{
		IOStreams:  streams,
		getter:     getter,
		PrintFlags: genericclioptions.NewPrintFlags("created").WithTypeSetter(apis.Scheme),
		DryRun:     cli.DryRunNone,
	}
}

// Complete records NAME and, with --placement, the placement's namespace.
func (o *CreateOptions) Complete(cmd *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	return o.Rollout.complete(cmd, o.getter)
}

// Validate checks the flags; the manifests are checked in Run, once read.
func (o *CreateOptions) Validate() error {
	var errs []error
	errs = append(errs, workargs.ValidateName(o.Name))
	if len(o.Filenames) == 0 {
		errs = append(errs, errors.New("no manifests given: use -f FILE|DIR (repeatable; -R to read subdirectories; - for stdin)"))
	}
	if o.Rollout.Placement == "" {
		errs = append(errs, o.Rollout.validateWithoutPlacement())
		if len(o.Clusters) == 0 {
			errs = append(errs, errors.New("no cluster given: use --clusters a,b (see `kubectl ocm get clusters`), or --placement NAMESPACE/NAME to follow a Placement"))
		} else {
			errs = append(errs, workargs.ValidateClusters(o.Clusters, "--clusters"))
		}
	} else {
		errs = append(errs, o.Rollout.validate(o.Name, len(o.Clusters) > 0))
	}
	if o.UpdateStrategy != "" && !slices.Contains(updateStrategies, o.UpdateStrategy) {
		errs = append(errs, fmt.Errorf("--update-strategy %q is not supported: use one of %s", o.UpdateStrategy, strings.Join(updateStrategies, ", ")))
	}
	if o.TakeOver != "" {
		if _, err := workv1.TakeOverRuleOf(map[string]string{workv1.TakeOverAnnotation: o.TakeOver}); err != nil {
			errs = append(errs, fmt.Errorf("--take-over %q is not supported: use one of %s", o.TakeOver, strings.Join(takeOverRules(), ", ")))
		}
	}
	errs = append(errs, cli.ValidateDryRun(o.DryRun), cli.ValidateOutput(o.PrintFlags, "json", "yaml", "name"))
	return errors.Join(errs...)
}

// takeOverRules are the values of --take-over.
func takeOverRules() []string {
	out := make([]string, 0, len(workv1.TakeOverRules))
	for _, r := range workv1.TakeOverRules {
		out = append(out, string(r))
	}
	return out
}

// annotations returns the annotations the flags give the created object.
func (o *CreateOptions) annotations() map[string]string {
	if o.TakeOver == "" {
		return nil
	}
	return map[string]string{workv1.TakeOverAnnotation: o.TakeOver}
}

// GetOptions are the flags and arguments of `kubectl ocm work get`.
type GetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name or wide; empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
	// Name, when set, restricts the list to the works of that name.
	Name string
	// Clusters restrict the list to the works of these managed clusters
	// (--clusters, else an explicit -n); empty lists those of every cluster.
	Clusters []string
	// AllNamespaces lists the works of every cluster namespace whatever -n
	// says; with ReplicaSet, the ManifestWorkReplicaSets of every namespace.
	AllNamespaces bool
	// ReplicaSet lists ManifestWorkReplicaSets instead of ManifestWorks.
	ReplicaSet bool
	// Namespace is the namespace of the ManifestWorkReplicaSets (-n, else
	// the context's).
	Namespace string
}

// NewGetOptions returns GetOptions for the hub getter selects.
func NewGetOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{IOStreams: streams, getter: getter, PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme)}
}

// Complete records NAME, the namespace and, without --clusters, -A or
// --replicaset, the cluster an explicit -n names.
func (o *GetOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	o.Namespace, o.Clusters, err = workargs.NamespaceClusters(o.getter, o.Clusters, !o.ReplicaSet && !o.AllNamespaces)
	return err
}

// Validate checks the flags.
func (o *GetOptions) Validate() error {
	var errs []error
	if o.ReplicaSet && len(o.Clusters) > 0 {
		errs = append(errs, errors.New("--clusters does not apply to --replicaset: ManifestWorkReplicaSets are in placement namespaces, select them with -n NAMESPACE or -A"))
	}
	if o.ReplicaSet && o.Name != "" && o.AllNamespaces {
		errs = append(errs, errors.New("NAME and --all-namespaces (-A) exclude each other with --replicaset: give -n NAMESPACE with NAME"))
	}
	if len(o.Clusters) > 0 && o.AllNamespaces {
		errs = append(errs, errors.New("--clusters and --all-namespaces (-A) exclude each other: give one"))
	}
	if len(o.Clusters) > 0 {
		errs = append(errs, workargs.ValidateClusters(o.Clusters, "--clusters"))
	}
	if o.Name != "" {
		errs = append(errs, workargs.ValidateName(o.Name))
	}
	return errors.Join(append(errs, cli.ValidateListOutput(o.PrintFlags))...)
}

// StatusOptions are the flags and arguments of `kubectl ocm work status`.
type StatusOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork.
	Name string
	// Clusters holds the one managed cluster (the work's namespace):
	// --clusters, else an explicit -n.
	Clusters []string
	// Output is json or yaml; empty prints the table.
	Output string
}

// NewStatusOptions returns StatusOptions for the hub getter selects.
func NewStatusOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *StatusOptions {
	return &StatusOptions{IOStreams: streams, getter: getter}
}

// Complete records NAME and, without --clusters, the cluster an explicit -n names.
func (o *StatusOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	_, o.Clusters, err = workargs.NamespaceClusters(o.getter, o.Clusters, true)
	return err
}

// Validate checks the flags.
func (o *StatusOptions) Validate() error {
	errs := []error{workargs.ValidateName(o.Name)}
	switch len(o.Clusters) {
	case 0:
		errs = append(errs, errors.New("no cluster given: use --clusters NAME (the managed cluster whose work to show), or -n NAME"))
	case 1:
		errs = append(errs, workargs.ValidateClusters(o.Clusters, "--clusters"))
	default:
		errs = append(errs, fmt.Errorf("--clusters: work status shows one cluster at a time, not %d: give one name", len(o.Clusters)))
	}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats))...)
}

// DeleteOptions are the flags and arguments of `kubectl ocm work delete`.
type DeleteOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork.
	Name string
	// Clusters are the managed clusters whose work NAME is deleted
	// (--clusters, else an explicit -n).
	Clusters []string
	// IgnoreNotFound treats a missing work as deleted.
	IgnoreNotFound bool
	// Wait waits until the works are gone: the agent has removed what they applied.
	Wait bool
	// Timeout bounds Wait.
	Timeout time.Duration
	// ReplicaSet deletes ManifestWorkReplicaSet NAME of Namespace instead.
	ReplicaSet bool
	// Namespace is the namespace of the ManifestWorkReplicaSet (-n, else the
	// context's).
	Namespace string
	// DryRun is none, client (say what would be deleted) or server (have
	// the hub admit the deletions too), deleting nothing.
	DryRun string
}

// NewDeleteOptions returns DeleteOptions for the hub getter selects.
func NewDeleteOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *DeleteOptions {
	return &DeleteOptions{IOStreams: streams, getter: getter, Timeout: 5 * time.Minute, DryRun: cli.DryRunNone}
}

// Complete records NAME, the namespace and, without --clusters or
// --replicaset, the cluster an explicit -n names.
func (o *DeleteOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	o.Namespace, o.Clusters, err = workargs.NamespaceClusters(o.getter, o.Clusters, !o.ReplicaSet)
	return err
}

// Validate checks the flags.
func (o *DeleteOptions) Validate() error {
	errs := []error{workargs.ValidateName(o.Name)}
	switch {
	case o.ReplicaSet && len(o.Clusters) > 0:
		errs = append(errs, errors.New("--clusters and --replicaset exclude each other: a ManifestWorkReplicaSet is deleted from its namespace (-n), and the hub removes its works from every cluster"))
	case !o.ReplicaSet:
		errs = append(errs, workargs.ValidateClusters(o.Clusters, "--clusters"))
	}
	errs = append(errs, cli.ValidateDryRunMode(o.DryRun))
	if o.Wait && cli.IsDryRun(o.DryRun) {
		errs = append(errs, errors.New("--wait and --dry-run exclude each other: a dry run deletes nothing to wait for"))
	}
	return errors.Join(append(errs, cli.ValidateTimeout(o.Timeout))...)
}
