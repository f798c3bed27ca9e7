package clusterset

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// CreateOptions are the flags and arguments of `kubectl ocm clusterset create`.
type CreateOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml or name print the set.
	PrintFlags *genericclioptions.PrintFlags
	// Name is the ManagedClusterSet.
	Name string
	// ClusterSelector, when set, makes a set of selector type LabelSelector
	// holding the clusters it matches (kubectl label selector syntax).
	ClusterSelector string
	// DryRun is none, client or server.
	DryRun string

	selector *metav1.LabelSelector
}

// NewCreateOptions returns CreateOptions for the hub getter selects.
func NewCreateOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CreateOptions {
	return &CreateOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone,
		PrintFlags: genericclioptions.NewPrintFlags("created").WithTypeSetter(apis.Scheme)}
}

// Complete records NAME and parses --cluster-selector.
func (o *CreateOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	if o.ClusterSelector != "" {
		sel, err := metav1.ParseToLabelSelector(o.ClusterSelector)
		if err != nil {
			return fmt.Errorf("--cluster-selector %q is not a label selector (write it as kubectl -l does: 'env=prod,region in (eu,us)'): %w", o.ClusterSelector, err)
		}
		o.selector = sel
	}
	return nil
}

// Validate checks the name and flags.
func (o *CreateOptions) Validate() error {
	return errors.Join(validateSetName(o.Name), cli.ValidateDryRun(o.DryRun), cli.ValidateOutput(o.PrintFlags, "json", "yaml", "name"))
}

// DeleteOptions are the flags and arguments of `kubectl ocm clusterset delete`.
type DeleteOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManagedClusterSet.
	Name string
	// Force deletes a set that is still bound to namespaces.
	Force bool
	// IgnoreNotFound treats a set that does not exist as deleted.
	IgnoreNotFound bool
}

// NewDeleteOptions returns DeleteOptions for the hub getter selects.
func NewDeleteOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *DeleteOptions {
	return &DeleteOptions{IOStreams: streams, getter: getter}
}

// Complete records NAME.
func (o *DeleteOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	return nil
}

// Validate refuses the sets the hub maintains.
func (o *DeleteOptions) Validate() error {
	if err := validateSetName(o.Name); err != nil {
		return err
	}
	if o.Name == clusterv1beta2.DefaultClusterSetName || o.Name == clusterv1beta2.GlobalClusterSetName {
		return fmt.Errorf("ManagedClusterSet %s cannot be deleted: the hub maintains it (and would recreate it); move clusters out of it with `kubectl ocm clusterset set OTHER --clusters ...` instead", o.Name)
	}
	return nil
}

// GetOptions are the flags and arguments of `kubectl ocm clusterset get`.
type GetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name or wide; empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
	// Name, when set, shows one set.
	Name string
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

// Validate checks NAME and -o.
func (o *GetOptions) Validate() error {
	var errs []error
	if o.Name != "" {
		errs = append(errs, validateSetName(o.Name))
	}
	return errors.Join(append(errs, cli.ValidateListOutput(o.PrintFlags))...)
}

// SetOptions are the flags and arguments of `kubectl ocm clusterset set`.
type SetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManagedClusterSet the clusters join.
	Name string
	// Clusters are the ManagedClusters moved into the set.
	Clusters []string
	// Namespaces are added to the set's spec.managedNamespaces, which the
	// agents create on every member cluster.
	Namespaces []string
	// Output is "" (a line per change), json or yaml (SetResult).
	Output string
	// DryRun is none, client (say what would change) or server (have the
	// hub admit each change too), changing nothing.
	DryRun string
}

// NewSetOptions returns SetOptions for the hub getter selects.
func NewSetOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *SetOptions {
	return &SetOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Complete records NAME and drops repeated --clusters and --namespaces.
func (o *SetOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	o.Clusters = unique(o.Clusters)
	o.Namespaces = unique(o.Namespaces)
	return nil
}

// Validate checks NAME, --clusters, --namespaces and the output flags.
func (o *SetOptions) Validate() error {
	errs := []error{validateSetName(o.Name)}
	if len(o.Clusters) == 0 && len(o.Namespaces) == 0 {
		errs = append(errs, errors.New("nothing to set: use --clusters a,b (see `kubectl ocm get clusters`) and/or --namespaces ns1,ns2"))
	}
	for _, c := range o.Clusters {
		if msgs := validation.IsDNS1123Label(c); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--clusters: cluster name %q is invalid: %s", c, strings.Join(msgs, "; ")))
		}
	}
	for _, ns := range o.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespaces: namespace name %q is invalid (a DNS-1123 label: lower case letters, digits and '-', at most 63): %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if o.Name == clusterv1beta2.GlobalClusterSetName && len(o.Clusters) > 0 {
		errs = append(errs, errors.New("ManagedClusterSet global holds every cluster by its label selector: clusters cannot be set into it"))
	}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats), cli.ValidateDryRunMode(o.DryRun))...)
}

// BindOptions are the flags and arguments of `kubectl ocm clusterset bind`
// and `unbind`.
type BindOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManagedClusterSet.
	Name string
	// Namespace is where the ManagedClusterSetBinding is (-n, else the
	// context's namespace).
	Namespace string
	// Unbind deletes the binding instead of creating it.
	Unbind bool
	// IgnoreNotFound makes unbind succeed when there is no binding.
	IgnoreNotFound bool
	// Output is "" (a summary), json or yaml (BindResult).
	Output string
	// DryRun is none, client (say what would change) or server (have the
	// hub admit the change too), changing nothing.
	DryRun string
}

// NewBindOptions returns BindOptions for the hub getter selects; unbind
// selects `unbind`.
func NewBindOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams, unbind bool) *BindOptions {
	return &BindOptions{IOStreams: streams, getter: getter, Unbind: unbind, DryRun: cli.DryRunNone}
}

// Complete records NAME and the namespace.
func (o *BindOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	ns, _, err := o.getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	o.Namespace = ns
	return nil
}

// Validate checks NAME, the namespace and the output flags.
func (o *BindOptions) Validate() error {
	errs := []error{validateSetName(o.Name)}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--namespace %q is invalid: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats), cli.ValidateDryRunMode(o.DryRun))...)
}

// unique returns names without repeats, in their first order.
func unique(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// validateSetName checks a ManagedClusterSet name: it must be a valid label
// value, since member clusters carry it in a label.
func validateSetName(name string) error {
	if name == "" {
		return errors.New("no cluster set name given: pass NAME as the first argument")
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Errorf("cluster set name %q is invalid: %s", name, strings.Join(msgs, "; "))
	}
	return nil
}
