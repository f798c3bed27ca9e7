package work

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// rolloutTypes are the values of --rollout.
var rolloutTypes = []string{string(clusterv1alpha1.All), string(clusterv1alpha1.Progressive), string(clusterv1alpha1.ProgressivePerGroup)}

// RolloutFlags are the flags of `work create` that deliver the work through
// a Placement as a ManifestWorkReplicaSet.
type RolloutFlags struct {
	// Placement is --placement, [NAMESPACE/]NAME.
	Placement string
	// PlacementNamespace and PlacementName are Placement split; the namespace
	// defaults to -n, else the context's.
	PlacementNamespace, PlacementName string
	// ReplicaSet is --replicaset, accepted for clarity: --placement implies it.
	ReplicaSet bool
	// Type is --rollout: All, Progressive or ProgressivePerGroup.
	Type string
	// MaxConcurrency is --max-concurrency (Progressive only), a number or a percentage.
	MaxConcurrency string
	// MaxFailures is --max-failures, a number or a percentage.
	MaxFailures string
	// MinSuccessTime is --min-success-time.
	MinSuccessTime time.Duration
	// ProgressDeadline is --progress-deadline, a duration or None.
	ProgressDeadline string
	// Gates is --gates: Before, After or Before,After (annotation
	// rollout.kubectl-ocm.io/gates).
	Gates string
	// StageSize is --stage-size (Progressive only): clusters per stage.
	StageSize int
	// FailureStrategy is --failure-strategy: Abort or Rollback.
	FailureStrategy string

	// changed records which rollout flags were given.
	changed []string
}

// progressDeadlinePattern is the form of a progressDeadline duration the API accepts.
var progressDeadlinePattern = regexp.MustCompile(`^([0-9]+[hms])+$`)

// rolloutFlagNames are the flags that only apply with --placement.
var rolloutFlagNames = []string{"replicaset", "rollout", "max-concurrency", "max-failures", "min-success-time", "progress-deadline",
	"gates", "stage-size", "failure-strategy"}

// addFlags adds the flags to cmd.
func (r *RolloutFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.Placement, "placement", "", "Deliver the work to the clusters Placement [NAMESPACE/]NAME selects, as a ManifestWorkReplicaSet in its namespace (excludes --clusters).")
	f.BoolVarP(&r.ReplicaSet, "replicaset", "r", false, "Create a ManifestWorkReplicaSet; implied by --placement and accepted for clarity.")
	f.StringVar(&r.Type, "rollout", string(clusterv1alpha1.All), "How template changes reach the clusters: All, Progressive or ProgressivePerGroup.")
	f.StringVar(&r.MaxConcurrency, "max-concurrency", "", "Progressive: most clusters rolled out at a time, a number or a percentage such as 25%.")
	f.StringVar(&r.MaxFailures, "max-failures", "", "Clusters (number or percentage) that may fail or time out before the rollout stops (default 0).")
	f.DurationVar(&r.MinSuccessTime, "min-success-time", 0, "Soak time after a cluster succeeded before the rollout moves on, such as 5m.")
	f.StringVar(&r.ProgressDeadline, "progress-deadline", "", "How long a cluster may take to succeed before it counts as failed, such as 10m, or None (the default: forever).")
	f.StringVar(&r.Gates, "gates", "", "Progressive or ProgressivePerGroup: run the rollout in stages held until approved: Before, After or Before,After (see kubectl ocm work rollout approve).")
	f.IntVar(&r.StageSize, "stage-size", 0, "Progressive: stages of this many clusters instead of one per decision group.")
	f.StringVar(&r.FailureStrategy, "failure-strategy", "", "When failures pass --max-failures: Abort the rollout, or Rollback the set to its previous revision (default: hold, as OCM).")
	_ = cmd.RegisterFlagCompletionFunc("rollout", cobra.FixedCompletions(rolloutTypes, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("gates", cobra.FixedCompletions([]string{"Before", "After", "Before,After"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("failure-strategy", cobra.FixedCompletions([]string{"Abort", "Rollback"}, cobra.ShellCompDirectiveNoFileComp))
}

// annotations returns the rollout control annotations the flags give the
// ManifestWorkReplicaSet.
func (r *RolloutFlags) annotations() map[string]string {
	out := map[string]string{}
	if r.Gates != "" {
		out[rolloutv1alpha1.GatesAnnotation] = r.Gates
	}
	if r.StageSize > 0 {
		out[rolloutv1alpha1.StageSizeAnnotation] = strconv.Itoa(r.StageSize)
	}
	if r.FailureStrategy != "" {
		out[rolloutv1alpha1.FailureStrategyAnnotation] = r.FailureStrategy
	}
	return out
}

// complete splits --placement and records which rollout flags were given.
func (r *RolloutFlags) complete(cmd *cobra.Command, getter genericclioptions.RESTClientGetter) error {
	if cmd != nil {
		r.changed = nil
		for _, name := range rolloutFlagNames {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
				r.changed = append(r.changed, name)
			}
		}
	}
	if r.Placement == "" {
		return nil
	}
	if ns, name, ok := strings.Cut(r.Placement, "/"); ok {
		r.PlacementNamespace, r.PlacementName = ns, name
		return nil
	}
	r.PlacementName = r.Placement
	if getter == nil {
		return nil
	}
	ns, _, err := cli.Namespace(getter)
	r.PlacementNamespace = ns
	return err
}

// validateWithoutPlacement fails when rollout flags are given without --placement.
func (r *RolloutFlags) validateWithoutPlacement() error {
	if len(r.changed) == 0 {
		return nil
	}
	return fmt.Errorf("--%s needs --placement NAMESPACE/NAME: rollouts and ManifestWorkReplicaSets follow a Placement (create one with `kubectl ocm placement create`)", r.changed[0])
}

// validate checks --placement and the rollout flags of ManifestWorkReplicaSet name.
func (r *RolloutFlags) validate(name string, clusters bool) error {
	var errs []error
	if clusters {
		errs = append(errs, errors.New("--clusters and --placement exclude each other: --clusters names the clusters, --placement lets a Placement select them; give one"))
	}
	if strings.Count(r.Placement, "/") > 1 || r.PlacementName == "" || (strings.Contains(r.Placement, "/") && r.PlacementNamespace == "") {
		errs = append(errs, fmt.Errorf("--placement %q: write NAMESPACE/NAME (or NAME with -n NAMESPACE)", r.Placement))
	} else {
		if msgs := validation.IsDNS1123Label(r.PlacementNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--placement %q: namespace %q is invalid: %s", r.Placement, r.PlacementNamespace, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsDNS1123Subdomain(r.PlacementName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--placement %q: placement name %q is invalid: %s", r.Placement, r.PlacementName, strings.Join(msgs, "; ")))
		}
	}
	if !slices.Contains(rolloutTypes, r.Type) {
		errs = append(errs, fmt.Errorf("--rollout %q is not supported: use one of %s", r.Type, strings.Join(rolloutTypes, ", ")))
	}
	if r.MaxConcurrency != "" {
		if r.Type != string(clusterv1alpha1.Progressive) {
			errs = append(errs, fmt.Errorf("--max-concurrency applies to --rollout Progressive only (ProgressivePerGroup rolls out one decision group at a time), not %s", r.Type))
		}
		errs = append(errs, validateIntOrPercent("--max-concurrency", r.MaxConcurrency, 1))
	}
	if r.MaxFailures != "" {
		errs = append(errs, validateIntOrPercent("--max-failures", r.MaxFailures, 0))
	}
	if _, err := rolloutv1alpha1.PolicyOf(map[string]string{rolloutv1alpha1.GatesAnnotation: r.Gates}); r.Gates != "" && err != nil {
		errs = append(errs, fmt.Errorf("--gates %q: give Before, After or Before,After", r.Gates))
	}
	if _, err := rolloutv1alpha1.PolicyOf(map[string]string{rolloutv1alpha1.FailureStrategyAnnotation: r.FailureStrategy}); r.FailureStrategy != "" && err != nil {
		errs = append(errs, fmt.Errorf("--failure-strategy %q: give Abort or Rollback", r.FailureStrategy))
	}
	if r.Gates != "" && r.Type == string(clusterv1alpha1.All) {
		errs = append(errs, fmt.Errorf("--gates needs --rollout Progressive or ProgressivePerGroup: All starts every cluster at once"))
	}
	if r.StageSize != 0 && r.Type != string(clusterv1alpha1.Progressive) {
		errs = append(errs, fmt.Errorf("--stage-size applies to --rollout Progressive only (ProgressivePerGroup has one stage per decision group), not %s", r.Type))
	}
	if r.StageSize < 0 {
		errs = append(errs, fmt.Errorf("--stage-size %d: give a number of clusters, 1 or more", r.StageSize))
	}
	if r.MinSuccessTime < 0 {
		errs = append(errs, fmt.Errorf("--min-success-time %s must not be negative", r.MinSuccessTime))
	}
	if r.ProgressDeadline != "" && r.ProgressDeadline != clusterv1alpha1.ProgressDeadlineNone {
		if d, err := time.ParseDuration(r.ProgressDeadline); err != nil || d <= 0 || !progressDeadlinePattern.MatchString(r.ProgressDeadline) {
			errs = append(errs, fmt.Errorf("--progress-deadline %q: give a positive duration in h, m or s such as 10m, or None", r.ProgressDeadline))
		}
	}
	return errors.Join(errs...)
}

// validateIntOrPercent checks a number (at least min) or a percentage from min to 100.
func validateIntOrPercent(flag, s string, minimum int) error {
	v := intstr.Parse(s)
	n, isPercent := 0, strings.HasSuffix(s, "%")
	var err error
	if isPercent {
		n, err = strconv.Atoi(strings.TrimSuffix(s, "%"))
	} else if v.Type == intstr.Int {
		n = v.IntValue()
	} else {
		err = errors.New("not a number")
	}
	if err != nil || n < minimum || (isPercent && n > 100) {
		return fmt.Errorf("%s %q: give a whole number of at least %d or a percentage such as 25%%", flag, s, minimum)
	}
	return nil
}

// Strategy returns the rollout strategy the flags describe.
func (r *RolloutFlags) Strategy() clusterv1alpha1.RolloutStrategy {
	cfg := clusterv1alpha1.RolloutConfig{ProgressDeadline: r.ProgressDeadline}
	cfg.MinSuccessTime.Duration = r.MinSuccessTime
	if r.MaxFailures != "" {
		cfg.MaxFailures = intstr.Parse(r.MaxFailures)
	}
	s := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.RolloutType(r.Type)}
	switch s.Type {
	case clusterv1alpha1.Progressive:
		p := &clusterv1alpha1.RolloutProgressive{RolloutConfig: cfg}
		if r.MaxConcurrency != "" {
			p.MaxConcurrency = intstr.Parse(r.MaxConcurrency)
		}
		s.Progressive = p
	case clusterv1alpha1.ProgressivePerGroup:
		s.ProgressivePerGroup = &clusterv1alpha1.RolloutProgressivePerGroup{RolloutConfig: cfg}
	default:
		if cfg != (clusterv1alpha1.RolloutConfig{}) {
			s.All = &clusterv1alpha1.RolloutAll{RolloutConfig: cfg}
		}
	}
	return s
}
