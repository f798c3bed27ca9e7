package work

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Dry-run modes of --dry-run.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
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
	// DryRun is none, client (print only) or server (validated and admitted
	// by the hub, not stored).
	DryRun string
	// SizeLimit is the largest total size of the manifests, in bytes.
	SizeLimit int
	// Rollout holds --placement, --replicaset and the rollout flags.
	Rollout RolloutFlags
}

// NewCreateOptions returns CreateOptions for the hub getter selects.
func NewCreateOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CreateOptions {
	return &CreateOptions{
		IOStreams:  streams,
		getter:     getter,
		PrintFlags: genericclioptions.NewPrintFlags("created").WithTypeSetter(apis.Scheme),
		DryRun:     dryRunNone,
		SizeLimit:  workv1.DefaultManifestsSizeLimit,
	}
}

// Complete records NAME and, with --placement, the placement's namespace.
func (o *CreateOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.Name = args[0]
	}
	return o.Rollout.complete(cmd, o.getter)
}

// Validate checks the flags; the manifests are checked in Run, once read.
func (o *CreateOptions) Validate() error {
	var errs []error
	errs = append(errs, validateWorkName(o.Name))
	if len(o.Filenames) == 0 {
		errs = append(errs, errors.New("no manifests given: use -f FILE|DIR (repeatable; -R to read subdirectories; - for stdin)"))
	}
	if o.Rollout.Placement == "" {
		errs = append(errs, o.Rollout.validateWithoutPlacement())
		if len(o.Clusters) == 0 {
			errs = append(errs, errors.New("no cluster given: use --clusters a,b (see `kubectl ocm get clusters`), or --placement NAMESPACE/NAME to follow a Placement"))
		} else {
			errs = append(errs, validateClusters(o.Clusters, "--clusters"))
		}
	} else {
		errs = append(errs, o.Rollout.validate(o.Name, len(o.Clusters) > 0))
	}
	if o.UpdateStrategy != "" && !slices.Contains(updateStrategies, o.UpdateStrategy) {
		errs = append(errs, fmt.Errorf("--update-strategy %q is not supported: use one of %s", o.UpdateStrategy, strings.Join(updateStrategies, ", ")))
	}
	if !slices.Contains([]string{dryRunNone, dryRunClient, dryRunServer}, o.DryRun) {
		errs = append(errs, fmt.Errorf("--dry-run %q is not supported: use none, client or server", o.DryRun))
	}
	if f := output(o.PrintFlags); f != "" && !slices.Contains([]string{"json", "yaml", "name"}, f) {
		errs = append(errs, fmt.Errorf("--output %q is not supported: use json, yaml or name", f))
	}
	if o.SizeLimit <= 0 {
		errs = append(errs, fmt.Errorf("the manifest size limit must be positive, not %d", o.SizeLimit))
	}
	return errors.Join(errs...)
}

// GetOptions are the flags and arguments of `kubectl ocm work get`.
type GetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name or wide; empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
	// Name, when set, restricts the list to the works of that name.
	Name string
	// Cluster restricts the list to the works of one managed cluster.
	Cluster string
	// AllClusters lists the works of every cluster (the default); with
	// ReplicaSet, the ManifestWorkReplicaSets of every namespace.
	AllClusters bool
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

// Complete records NAME and, with --replicaset, the namespace.
func (o *GetOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.Name = args[0]
	}
	if o.ReplicaSet {
		ns, _, err := cli.Namespace(o.getter)
		o.Namespace = ns
		return err
	}
	return nil
}

// Validate checks the flags.
func (o *GetOptions) Validate() error {
	var errs []error
	if o.ReplicaSet && o.Cluster != "" {
		errs = append(errs, errors.New("--cluster does not apply to --replicaset: ManifestWorkReplicaSets are in placement namespaces, select them with -n NAMESPACE or -A"))
	}
	if o.ReplicaSet && o.Name != "" && o.AllClusters {
		errs = append(errs, errors.New("NAME and --all-namespaces (-A) exclude each other with --replicaset: give -n NAMESPACE with NAME"))
	}
	if o.Cluster != "" && o.AllClusters {
		errs = append(errs, errors.New("--cluster and --all-clusters (-A) exclude each other: give one"))
	}
	if o.Cluster != "" {
		errs = append(errs, validateClusters([]string{o.Cluster}, "--cluster"))
	}
	if o.Name != "" {
		errs = append(errs, validateWorkName(o.Name))
	}
	if f := output(o.PrintFlags); f != "" && f != "wide" && !slices.Contains(o.PrintFlags.AllowedFormats(), f) {
		errs = append(errs, fmt.Errorf("--output %q is not supported: use wide, %s", f, strings.Join(o.PrintFlags.AllowedFormats(), ", ")))
	}
	return errors.Join(errs...)
}

// StatusOptions are the flags and arguments of `kubectl ocm work status`.
type StatusOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork.
	Name string
	// Cluster is the managed cluster (the work's namespace).
	Cluster string
	// Output is json or yaml; empty prints the table.
	Output string
}

// NewStatusOptions returns StatusOptions for the hub getter selects.
func NewStatusOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *StatusOptions {
	return &StatusOptions{IOStreams: streams, getter: getter}
}

// Complete records NAME.
func (o *StatusOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.Name = args[0]
	}
	return nil
}

// Validate checks the flags.
func (o *StatusOptions) Validate() error {
	errs := []error{validateWorkName(o.Name)}
	if o.Cluster == "" {
		errs = append(errs, errors.New("no cluster given: use --cluster NAME (the managed cluster whose work to show)"))
	} else {
		errs = append(errs, validateClusters([]string{o.Cluster}, "--cluster"))
	}
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		errs = append(errs, fmt.Errorf("--output %q is not supported: use json or yaml", o.Output))
	}
	return errors.Join(errs...)
}

// DeleteOptions are the flags and arguments of `kubectl ocm work delete`.
type DeleteOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork.
	Name string
	// Clusters are the managed clusters whose work NAME is deleted.
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
}

// NewDeleteOptions returns DeleteOptions for the hub getter selects.
func NewDeleteOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *DeleteOptions {
	return &DeleteOptions{IOStreams: streams, getter: getter, Timeout: 5 * time.Minute}
}

// Complete records NAME and, with --replicaset, the namespace.
func (o *DeleteOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.Name = args[0]
	}
	if o.ReplicaSet {
		ns, _, err := cli.Namespace(o.getter)
		o.Namespace = ns
		return err
	}
	return nil
}

// Validate checks the flags.
func (o *DeleteOptions) Validate() error {
	errs := []error{validateWorkName(o.Name)}
	switch {
	case o.ReplicaSet && len(o.Clusters) > 0:
		errs = append(errs, errors.New("--clusters and --replicaset exclude each other: a ManifestWorkReplicaSet is deleted from its namespace (-n), and the hub removes its works from every cluster"))
	case !o.ReplicaSet:
		errs = append(errs, validateClusters(o.Clusters, "--clusters"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout must be positive, not %s", o.Timeout))
	}
	return errors.Join(errs...)
}

// validateWorkName checks a ManifestWork name.
func validateWorkName(name string) error {
	if name == "" {
		return errors.New("no work name given: pass NAME as the first argument")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("work name %q is invalid: %s", name, strings.Join(msgs, "; "))
	}
	return nil
}

// validateClusters checks the cluster names of flag: at least one, each a
// DNS-1123 label, none twice.
func validateClusters(clusters []string, flag string) error {
	if len(clusters) == 0 {
		return fmt.Errorf("no cluster given: use %s a,b (see `kubectl ocm get clusters`)", flag)
	}
	seen := map[string]bool{}
	for _, c := range clusters {
		if msgs := validation.IsDNS1123Label(c); len(msgs) > 0 {
			return fmt.Errorf("%s: cluster name %q is invalid: %s", flag, c, strings.Join(msgs, "; "))
		}
		if seen[c] {
			return fmt.Errorf("%s: cluster %s is given twice", flag, c)
		}
		seen[c] = true
	}
	return nil
}

// output is the -o value of flags.
func output(flags *genericclioptions.PrintFlags) string {
	if flags.OutputFormat == nil {
		return ""
	}
	return *flags.OutputFormat
}
