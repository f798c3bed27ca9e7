package addon

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// defaultTimeout is how long --wait waits unless --timeout says otherwise.
const defaultTimeout = 5 * time.Minute

// EnableOptions are the flags of `kubectl ocm addon enable`.
type EnableOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml or name print the ManagedClusterAddOns
	// instead of one line per add-on and cluster.
	PrintFlags *genericclioptions.PrintFlags
	// Names are the add-ons to enable (ClusterManagementAddOn names).
	Names []string
	// Clusters are the managed clusters to enable them on.
	Clusters []string
	// InstallNamespace is spec.installNamespace: where the agent runs on the
	// managed cluster.
	InstallNamespace string
	// Annotations and Labels are set on every ManagedClusterAddOn.
	Annotations, Labels map[string]string
	// ConfigFile is the file of --config-file; Configs are the entries read
	// from it, written to spec.configs.
	ConfigFile string
	Configs    []addonv1alpha1.AddOnConfig
	// Wait waits until every ManagedClusterAddOn is Available.
	Wait bool
	// Timeout bounds Wait.
	Timeout time.Duration
	// DryRun is none, client (print only) or server (validated and admitted
	// by the hub, not stored).
	DryRun string
}

// NewEnableOptions returns EnableOptions for the hub getter selects.
func NewEnableOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *EnableOptions {
	return &EnableOptions{
		IOStreams:        streams,
		getter:           getter,
		PrintFlags:       genericclioptions.NewPrintFlags("enabled").WithTypeSetter(apis.Scheme),
		InstallNamespace: addonv1alpha1.DefaultAddonInstallNamespace,
		Timeout:          defaultTimeout,
		DryRun:           cli.DryRunNone,
	}
}

// Complete reads --config-file.
func (o *EnableOptions) Complete(*cobra.Command, []string) error {
	if o.ConfigFile == "" {
		return nil
	}
	configs, err := ReadConfigFile(o.ConfigFile)
	o.Configs = configs
	return err
}

// Validate checks the flags.
func (o *EnableOptions) Validate() error {
	errs := []error{
		validateNames("--names", "add-on", o.Names, addonNameProblems),
		validateNames("--clusters", "cluster", o.Clusters, validation.IsDNS1123Label),
		validateMetadata(o.Annotations, o.Labels),
		cli.ValidateDryRun(o.DryRun),
		cli.ValidateTimeout(o.Timeout),
		cli.ValidateOutput(o.PrintFlags, "json", "yaml", "name"),
	}
	if msgs := validation.IsDNS1123Label(o.InstallNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--namespace %q is not a valid namespace name for the add-on agent: %s", o.InstallNamespace, strings.Join(msgs, "; ")))
	}
	if o.Wait && o.DryRun != cli.DryRunNone {
		errs = append(errs, errors.New("--wait and --dry-run exclude each other: a dry run enables nothing to wait for"))
	}
	return errors.Join(errs...)
}

// DisableOptions are the flags of `kubectl ocm addon disable`.
type DisableOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Names are the add-ons to disable.
	Names []string
	// Clusters are the managed clusters to disable them on.
	Clusters []string
	// AllClusters disables them on every cluster they are enabled on.
	AllClusters bool
	// IgnoreNotFound treats an add-on not enabled on a named cluster as disabled.
	IgnoreNotFound bool
	// Wait waits until the ManagedClusterAddOns are gone.
	Wait bool
	// Timeout bounds Wait.
	Timeout time.Duration
	// DryRun is none, client (say what would be deleted) or server (the hub
	// checks the deletions without doing them).
	DryRun string
}

// NewDisableOptions returns DisableOptions for the hub getter selects.
func NewDisableOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *DisableOptions {
	return &DisableOptions{IOStreams: streams, getter: getter, Timeout: defaultTimeout, DryRun: cli.DryRunNone}
}

// Complete has nothing to fill in: every input is a flag.
func (o *DisableOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *DisableOptions) Validate() error {
	errs := []error{
		validateNames("--names", "add-on", o.Names, addonNameProblems),
		cli.ValidateDryRun(o.DryRun),
		cli.ValidateTimeout(o.Timeout),
	}
	switch {
	case o.AllClusters && len(o.Clusters) > 0:
		errs = append(errs, errors.New("--clusters and --all-clusters exclude each other: give one"))
	case !o.AllClusters:
		errs = append(errs, validateNames("--clusters", "cluster", o.Clusters, validation.IsDNS1123Label))
	}
	if o.Wait && o.DryRun != cli.DryRunNone {
		errs = append(errs, errors.New("--wait and --dry-run exclude each other: a dry run deletes nothing to wait for"))
	}
	return errors.Join(errs...)
}

// ListOptions are the flags of `kubectl ocm addon list`.
type ListOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name, wide (and kubectl's other
	// machine formats); empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
}

// NewListOptions returns ListOptions for the hub getter selects.
func NewListOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *ListOptions {
	return &ListOptions{IOStreams: streams, getter: getter, PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme)}
}

// Complete has nothing to fill in: list takes no arguments.
func (o *ListOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks -o.
func (o *ListOptions) Validate() error { return cli.ValidateListOutput(o.PrintFlags) }

// GetOptions are the flags and arguments of `kubectl ocm addon get`.
type GetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name or wide; json and yaml print the
	// ManagedClusterAddOns.
	PrintFlags *genericclioptions.PrintFlags
	// Name is the add-on.
	Name string
	// Clusters, when set, restrict the output to these clusters.
	Clusters []string
}

// NewGetOptions returns GetOptions for the hub getter selects.
func NewGetOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{IOStreams: streams, getter: getter, PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme)}
}

// Complete records NAME.
func (o *GetOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	return nil
}

// Validate checks NAME, --clusters and -o.
func (o *GetOptions) Validate() error {
	errs := []error{validateName("NAME", "add-on", o.Name, addonNameProblems), cli.ValidateListOutput(o.PrintFlags)}
	if len(o.Clusters) > 0 {
		errs = append(errs, validateNames("--clusters", "cluster", o.Clusters, validation.IsDNS1123Label))
	}
	return errors.Join(errs...)
}

// addonNameProblems says what makes name unusable as an add-on name: it must
// be a DNS-1123 subdomain (a ClusterManagementAddOn name), fit in the
// add-on-name label value, and make a valid label key of the ManagedCluster
// feature label feature.open-cluster-management.io/addon-<name>.
func addonNameProblems(name string) []string {
	msgs := validation.IsDNS1123Subdomain(name)
	msgs = append(msgs, validation.IsValidLabelValue(name)...)
	if len(msgs) == 0 {
		msgs = validation.IsQualifiedName(featureLabelPrefix + name)
	}
	return msgs
}

// featureLabelPrefix starts the ManagedCluster label that reports an
// add-on's availability.
const featureLabelPrefix = "feature.open-cluster-management.io/addon-"

// validateName checks one name given with flag (or as an argument).
func validateName(flag, what, name string, problems func(string) []string) error {
	if name == "" {
		return fmt.Errorf("no %s name given: pass it as %s", what, flag)
	}
	if msgs := problems(name); len(msgs) > 0 {
		return fmt.Errorf("%s: %s name %q is invalid: %s", flag, what, name, strings.Join(msgs, "; "))
	}
	return nil
}

// validateNames checks the names given with flag: at least one, each valid,
// none twice.
func validateNames(flag, what string, names []string, problems func(string) []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no %s given: use %s a,b", what, flag)
	}
	seen := sets.New[string]()
	var errs []error
	for _, n := range names {
		if seen.Has(n) {
			errs = append(errs, fmt.Errorf("%s: %s %s is given twice", flag, what, n))
		}
		seen.Insert(n)
		errs = append(errs, validateName(flag, what, n, problems))
	}
	return errors.Join(errs...)
}

// validateMetadata checks the keys and values of --annotate and --labels.
func validateMetadata(annotations, labels map[string]string) error {
	var errs []error
	for _, k := range sets.List(sets.KeySet(annotations)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--annotate: key %q is invalid: %s", k, strings.Join(msgs, "; ")))
		}
	}
	for _, k := range sets.List(sets.KeySet(labels)) {
		msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(labels[k])...)
		if len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--labels: %s=%s is invalid: %s", k, labels[k], strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}
