package placement

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// config is a placement's spec, parsed and compiled once per run.
type config struct {
	predicates   []compiledPredicate
	prioritizers []prioritizer
	groups       []compiledGroup
	spread       []spreadConstraint
	// usesClaims reports whether any selector or constraint reads claims.
	usesClaims bool
	// usesCEL reports whether any predicate has CEL expressions.
	usesCEL bool
}

// compiledPredicate is one entry of spec.predicates, compiled.
type compiledPredicate struct {
	sel   labelClaimSelector
	exprs []string
	progs []cel.Program
}

// compiledGroup is one entry of the decision groups, compiled.
type compiledGroup struct {
	name string
	sel  labelClaimSelector
}

// configError is a misconfiguration: plugin names the part of the spec (as
// OCM names its plugins) and the message says what is wrong.
type configError struct {
	plugin string
	msg    string
}

// Error renders the error as the PlacementMisconfigured message, "plugin:message".
func (e *configError) Error() string { return e.plugin + ":" + e.msg }

// compile parses and validates the placement's spec.
func (s *Scheduler) compile(spec *clusterv1beta1.PlacementSpec) (config, *configError) {
	var cfg config
	for i, p := range spec.Predicates {
		sel := &p.RequiredClusterSelector
		cs, err := compileLabelClaimSelector(&sel.LabelSelector, &sel.ClaimSelector)
		if err != nil {
			return cfg, &configError{"Predicate", fmt.Sprintf("predicate %d: %v", i, err)}
		}
		cp := compiledPredicate{sel: cs, exprs: sel.CelSelector.CelExpressions}
		for j, expr := range sel.CelSelector.CelExpressions {
			prg, err := s.cel.program(expr)
			if err != nil {
				return cfg, &configError{"Predicate", fmt.Sprintf("predicate %d: celSelector expression %d: %v", i, j, err)}
			}
			cp.progs = append(cp.progs, prg)
		}
		cfg.usesClaims = cfg.usesClaims || cs.usesClaims()
		cfg.usesCEL = cfg.usesCEL || len(cp.progs) > 0
		cfg.predicates = append(cfg.predicates, cp)
	}
	for i, t := range spec.Tolerations {
		if t.Key == "" && t.Operator != clusterv1beta1.TolerationOpExists {
			return cfg, &configError{"TaintToleration", fmt.Sprintf("toleration %d: if the key is empty, operator must be Exists", i)}
		}
		if t.Operator == clusterv1beta1.TolerationOpExists && t.Value != "" {
			return cfg, &configError{"TaintToleration", fmt.Sprintf("toleration %d: if the operator is Exists, the value should be empty", i)}
		}
	}
	prs, err := compilePrioritizers(&spec.PrioritizerPolicy)
	if err != nil {
		return cfg, err
	}
	cfg.prioritizers = prs
	for i, g := range spec.DecisionStrategy.GroupStrategy.DecisionGroups {
		cs, err := compileLabelClaimSelector(&g.ClusterSelector.LabelSelector, &g.ClusterSelector.ClaimSelector)
		if err != nil {
			return cfg, &configError{"DecisionStrategy", fmt.Sprintf("decision group %d (%s): %v", i, g.GroupName, err)}
		}
		cfg.usesClaims = cfg.usesClaims || cs.usesClaims()
		cfg.groups = append(cfg.groups, compiledGroup{name: g.GroupName, sel: cs})
	}
	if _, err := groupLength(spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup, 1); err != nil {
		return cfg, &configError{"DecisionStrategy", err.Error()}
	}
	cfg.spread = compileSpread(spec.SpreadPolicy.SpreadConstraints)
	for _, c := range cfg.spread {
		cfg.usesClaims = cfg.usesClaims || c.claim
	}
	return cfg, nil
}

// groupLength is the size of the decision groups for total selected clusters:
// clustersPerDecisionGroup as a number or a percentage of total rounded up;
// total when unset, not positive or larger than total.
func groupLength(v intstr.IntOrString, total int) (int, error) {
	n := total
	switch {
	case v.Type == intstr.Int:
		n = int(v.IntVal)
	case strings.HasSuffix(v.StrVal, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
		if err != nil {
			return 0, fmt.Errorf("clustersPerDecisionGroup %q is not a percentage", v.StrVal)
		}
		n = int(math.Ceil(f / 100 * float64(total)))
	case v.StrVal == "":
	default:
		i, err := strconv.Atoi(v.StrVal)
		if err != nil {
			return 0, fmt.Errorf("clustersPerDecisionGroup %q is neither a number nor a percentage", v.StrVal)
		}
		n = i
	}
	if n <= 0 || n > total {
		n = total
	}
	return n, nil
}
