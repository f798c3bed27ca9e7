package placement

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// CreateOptions are the flags and arguments of `kubectl ocm placement create`.
type CreateOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml or name print the Placement.
	PrintFlags *genericclioptions.PrintFlags
	// Name and Namespace locate the Placement.
	Name, Namespace string
	// ClusterSets narrow the candidates to these bound sets.
	ClusterSets []string
	// LabelSelectors, ClaimSelectors and CelExpressions are ANDed into the
	// Placement's one predicate.
	LabelSelectors, ClaimSelectors, CelExpressions []string
	// Count is --count, the number of clusters; CountSet says it was given.
	Count    int32
	CountSet bool
	// Prioritizers are the --prioritizers values.
	Prioritizers []string
	// PrioritizerMode is Additive, Exact or empty.
	PrioritizerMode string
	// Spread are the --spread values.
	Spread []string
	// Tolerate are the --tolerate values.
	Tolerate []string
	// Overwrite replaces the spec of an existing Placement.
	Overwrite bool
	// DryRun is none, client or server.
	DryRun string

	// Placement is the object built by Complete.
	Placement *clusterv1beta1.Placement
	// parseErrs are the flag errors found by Complete, reported by Validate.
	parseErrs []error
}

// NewCreateOptions returns CreateOptions for the hub getter selects.
func NewCreateOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CreateOptions {
	return &CreateOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone,
		PrintFlags: genericclioptions.NewPrintFlags("created").WithTypeSetter(apis.Scheme)}
}

// Complete records NAME and the namespace and builds the Placement from the
// flags; flag errors are kept for Validate.
func (o *CreateOptions) Complete(cmd *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	ns, _, err := cli.Namespace(o.getter)
	if err != nil {
		return err
	}
	o.Namespace = ns
	if cmd != nil {
		o.CountSet = cmd.Flags().Changed("count")
	}
	o.Placement, o.parseErrs = o.build()
	return nil
}

// build returns the Placement the flags describe and every flag error.
func (o *CreateOptions) build() (*clusterv1beta1.Placement, []error) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace}}
	p.SetGroupVersionKind(clusterv1beta1.GroupVersion.WithKind("Placement"))
	var errs []error
	p.Spec.ClusterSets = o.ClusterSets
	if o.CountSet {
		p.Spec.NumberOfClusters = ptr.To(o.Count)
	}
	sel := clusterv1beta1.ClusterSelector{}
	for _, s := range o.LabelSelectors {
		ls, err := ParseSelector("--label-selectors", s, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for k, v := range ls.MatchLabels {
			if old, ok := sel.LabelSelector.MatchLabels[k]; ok && old != v {
				errs = append(errs, fmt.Errorf("--label-selectors: label %s must equal both %s and %s, which no cluster can: drop one", k, old, v))
			}
			if sel.LabelSelector.MatchLabels == nil {
				sel.LabelSelector.MatchLabels = map[string]string{}
			}
			sel.LabelSelector.MatchLabels[k] = v
		}
		sel.LabelSelector.MatchExpressions = append(sel.LabelSelector.MatchExpressions, ls.MatchExpressions...)
	}
	for _, s := range o.ClaimSelectors {
		cs, err := ParseSelector("--claim-selectors", s, true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sel.ClaimSelector.MatchExpressions = append(sel.ClaimSelector.MatchExpressions, cs.MatchExpressions...)
	}
	for _, e := range o.CelExpressions {
		if strings.TrimSpace(e) == "" {
			errs = append(errs, errors.New("--cel: an expression is empty: give a CEL expression over managedCluster, such as 'managedCluster.metadata.labels[\"env\"] == \"prod\"'"))
			continue
		}
		sel.CelSelector.CelExpressions = append(sel.CelSelector.CelExpressions, e)
	}
	if len(o.LabelSelectors)+len(o.ClaimSelectors)+len(o.CelExpressions) > 0 {
		p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: sel}}
	}
	seen := map[string]bool{}
	for _, s := range o.Prioritizers {
		cfg, err := ParsePrioritizer(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := prioritizerKey(cfg.ScoreCoordinate)
		if seen[key] {
			errs = append(errs, fmt.Errorf("--prioritizers: %s is given twice: give each prioritizer once", key))
		}
		seen[key] = true
		p.Spec.PrioritizerPolicy.Configurations = append(p.Spec.PrioritizerPolicy.Configurations, cfg)
	}
	if o.PrioritizerMode != "" {
		p.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeType(o.PrioritizerMode)
	}
	for _, s := range o.Spread {
		term, err := ParseSpread(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.Spec.SpreadPolicy.SpreadConstraints = append(p.Spec.SpreadPolicy.SpreadConstraints, term)
	}
	for _, s := range o.Tolerate {
		t, err := ParseToleration(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, t)
	}
	return p, errs
}

// prioritizerKey names a score coordinate as Explanation.Scores keys it.
func prioritizerKey(sc *clusterv1beta1.ScoreCoordinate) string {
	if sc == nil {
		return ""
	}
	if sc.Type == clusterv1beta1.ScoreCoordinateTypeAddOn && sc.AddOn != nil {
		return "AddOn:" + sc.AddOn.ResourceName + ":" + sc.AddOn.ScoreName
	}
	return "BuiltIn:" + sc.BuiltIn
}

// Validate reports every flag error, each naming its flag and the fix.
func (o *CreateOptions) Validate() error {
	errs := append([]error{validateName(o.Name), validateNamespace(o.Namespace)}, o.parseErrs...)
	for _, s := range o.ClusterSets {
		if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--clustersets: %q is not a cluster set name: %s", s, strings.Join(msgs, "; ")))
		}
	}
	if o.CountSet && o.Count < 0 {
		errs = append(errs, fmt.Errorf("--count %d must not be negative: give the number of clusters to select, or leave it out to select every matching cluster", o.Count))
	}
	if o.PrioritizerMode != "" && o.PrioritizerMode != string(clusterv1beta1.PrioritizerPolicyModeAdditive) && o.PrioritizerMode != string(clusterv1beta1.PrioritizerPolicyModeExact) {
		errs = append(errs, fmt.Errorf("--prioritizer-mode %q is not supported: use Additive (unlisted prioritizers keep their default weights) or Exact (only the listed ones count)", o.PrioritizerMode))
	}
	if len(o.Spread) > maxSpreadConstraints {
		errs = append(errs, fmt.Errorf("--spread is given %d times: a Placement holds at most %d spread constraints", len(o.Spread), maxSpreadConstraints))
	}
	if len(o.parseErrs) == 0 && o.Placement != nil {
		errs = append(errs, checkConfig(o.Placement))
	}
	errs = append(errs, cli.ValidateDryRun(o.DryRun), cli.ValidateOutput(o.PrintFlags, "json", "yaml", "name"))
	return errors.Join(errs...)
}

// configFlags names the flag behind each part of the hub's PlacementMisconfigured message.
var configFlags = map[string]string{
	"celSelector": "--cel", "Predicate": "--label-selectors or --claim-selectors",
	"TaintToleration": "--tolerate", "Prioritizer": "--prioritizers",
}

// checkConfig runs the hub's own configuration check (the scheduler's, with
// no clusters) and reports what would make the placement Misconfigured, such
// as a CEL expression that does not compile.
func checkConfig(p *clusterv1beta1.Placement) error {
	res := placement.NewScheduler().Schedule(placement.Input{Placement: p})
	if res.Misconfigured.Status != metav1.ConditionTrue {
		return nil
	}
	msg := res.Misconfigured.Message
	flag := "the flags"
	for _, part := range []string{"celSelector", "Predicate", "TaintToleration", "Prioritizer"} {
		if strings.Contains(msg, part) {
			flag = configFlags[part]
			break
		}
	}
	return fmt.Errorf("the hub would mark this placement misconfigured (%s): correct %s", msg, flag)
}

// GetOptions are the flags and arguments of `kubectl ocm placement get`.
type GetOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml, name or wide; empty prints the table.
	PrintFlags *genericclioptions.PrintFlags
	// Name, when set, shows one Placement.
	Name string
	// Namespace is the namespace listed; AllNamespaces lists every one.
	Namespace     string
	AllNamespaces bool
}

// NewGetOptions returns GetOptions for the hub getter selects.
func NewGetOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{IOStreams: streams, getter: getter, PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme)}
}

// Complete records NAME and the namespace.
func (o *GetOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	ns, _, err := cli.Namespace(o.getter)
	o.Namespace = ns
	return err
}

// Validate checks NAME, -A and -o.
func (o *GetOptions) Validate() error {
	var errs []error
	if o.Name != "" {
		errs = append(errs, validateName(o.Name))
		if o.AllNamespaces {
			errs = append(errs, errors.New("NAME and --all-namespaces (-A) exclude each other: give -n NAMESPACE with NAME"))
		}
	}
	return errors.Join(append(errs, cli.ValidateListOutput(o.PrintFlags))...)
}

// NamedOptions are the flags and arguments of the placement verbs that take
// one Placement: decisions, delete and explain.
type NamedOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name and Namespace locate the Placement.
	Name, Namespace string
	// Output is json, yaml or empty (table).
	Output string
	// IgnoreNotFound makes delete succeed when the Placement does not exist.
	IgnoreNotFound bool
}

// newNamedOptions returns NamedOptions for the hub getter selects.
func newNamedOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) NamedOptions {
	return NamedOptions{IOStreams: streams, getter: getter}
}

// Complete records NAME and the namespace.
func (o *NamedOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	ns, _, err := cli.Namespace(o.getter)
	o.Namespace = ns
	return err
}

// Validate checks NAME and -o.
func (o *NamedOptions) Validate() error {
	errs := []error{validateName(o.Name)}
	return errors.Join(append(errs, cli.ValidateOutputFormat(o.Output, cli.ReportFormats))...)
}

// validateName checks a Placement name.
func validateName(name string) error {
	if name == "" {
		return errors.New("no placement name given: pass NAME as the first argument")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("placement name %q is invalid: %s", name, strings.Join(msgs, "; "))
	}
	return nil
}

// validateNamespace checks the namespace of -n.
func validateNamespace(ns string) error {
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return fmt.Errorf("--namespace %q is invalid: %s", ns, strings.Join(msgs, "; "))
	}
	return nil
}
