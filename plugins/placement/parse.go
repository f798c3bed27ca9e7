package placement

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// builtInPrioritizers are the names --prioritizers accepts after BuiltIn:.
var builtInPrioritizers = []string{
	clusterv1beta1.PrioritizerBalance, clusterv1beta1.PrioritizerSteady,
	clusterv1beta1.PrioritizerResourceAllocatableCPU, clusterv1beta1.PrioritizerResourceAllocatableMemory,
}

// maxSpreadConstraints is the most spread constraints a Placement holds.
const maxSpreadConstraints = 8

// ParseSelector parses a selector in kubectl's label selector syntax
// ('k=v,k2 in (a,b),!k3') for flag. Equality requirements become matchLabels
// unless claims is set: claim selectors have only matchExpressions.
func ParseSelector(flag, s string, claims bool) (metav1.LabelSelector, error) {
	out := metav1.LabelSelector{}
	sel, err := labels.Parse(s)
	if err != nil {
		return out, fmt.Errorf("%s %q is not a selector: write it as kubectl -l does, such as 'env=prod,region in (eu,us),!canary': %w", flag, s, err)
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		values := r.Values().List()
		var op metav1.LabelSelectorOperator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals:
			if !claims {
				if out.MatchLabels == nil {
					out.MatchLabels = map[string]string{}
				}
				out.MatchLabels[r.Key()] = values[0]
				continue
			}
			op = metav1.LabelSelectorOpIn
		case selection.In:
			op = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			op = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			op = metav1.LabelSelectorOpDoesNotExist
		default:
			return out, fmt.Errorf("%s %q: operator %s is not supported: use =, !=, in, notin, KEY or !KEY", flag, s, r.Operator())
		}
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op, Values: values})
	}
	return out, nil
}

// ParsePrioritizer parses one --prioritizers value: BuiltIn:NAME[:WEIGHT] or
// AddOn:RESOURCE:SCORE[:WEIGHT]; the weight defaults to 1 and ranges from
// -10 to 10.
func ParsePrioritizer(s string) (clusterv1beta1.PrioritizerConfig, error) {
	parts := strings.Split(s, ":")
	cfg := clusterv1beta1.PrioritizerConfig{Weight: clusterv1beta1.DefaultPrioritizerWeight}
	var weight string
	switch {
	case strings.EqualFold(parts[0], clusterv1beta1.ScoreCoordinateTypeBuiltIn) && (len(parts) == 2 || len(parts) == 3):
		name := parts[1]
		known := false
		for _, b := range builtInPrioritizers {
			if strings.EqualFold(b, name) {
				name, known = b, true
			}
		}
		if !known {
			return cfg, fmt.Errorf("--prioritizers %q: unknown built-in prioritizer %q: use one of %s", s, name, strings.Join(builtInPrioritizers, ", "))
		}
		cfg.ScoreCoordinate = &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}
		if len(parts) == 3 {
			weight = parts[2]
		}
	case strings.EqualFold(parts[0], clusterv1beta1.ScoreCoordinateTypeAddOn) && (len(parts) == 3 || len(parts) == 4):
		if parts[1] == "" || parts[2] == "" {
			return cfg, fmt.Errorf("--prioritizers %q: an add-on score needs the AddOnPlacementScore and the score name: AddOn:RESOURCE:SCORE[:WEIGHT]", s)
		}
		if msgs := validation.IsDNS1123Subdomain(parts[1]); len(msgs) > 0 {
			return cfg, fmt.Errorf("--prioritizers %q: %q is not an AddOnPlacementScore name: %s", s, parts[1], strings.Join(msgs, "; "))
		}
		cfg.ScoreCoordinate = &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: parts[1], ScoreName: parts[2]}}
		if len(parts) == 4 {
			weight = parts[3]
		}
	default:
		return cfg, fmt.Errorf("--prioritizers %q: write BuiltIn:NAME[:WEIGHT] (NAME one of %s) or AddOn:RESOURCE:SCORE[:WEIGHT]", s, strings.Join(builtInPrioritizers, ", "))
	}
	if weight != "" {
		w, err := strconv.ParseInt(weight, 10, 32)
		if err != nil || w < -10 || w > 10 {
			return cfg, fmt.Errorf("--prioritizers %q: weight %q must be an integer from -10 to 10", s, weight)
		}
		cfg.Weight = int32(w)
	}
	return cfg, nil
}

// ParseSpread parses one --spread value:
// KEY:MAXSKEW[:DoNotSchedule|ScheduleAnyway][:claim|label].
func ParseSpread(s string) (clusterv1beta1.SpreadConstraintsTerm, error) {
	parts := strings.Split(s, ":")
	term := clusterv1beta1.SpreadConstraintsTerm{TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel, WhenUnsatisfiable: clusterv1beta1.ScheduleAnyway}
	usage := "write KEY:MAXSKEW[:DoNotSchedule|ScheduleAnyway][:claim], such as region:1:DoNotSchedule"
	if len(parts) < 2 || len(parts) > 4 {
		return term, fmt.Errorf("--spread %q: %s", s, usage)
	}
	term.TopologyKey = parts[0]
	if msgs := validation.IsQualifiedName(term.TopologyKey); len(msgs) > 0 {
		return term, fmt.Errorf("--spread %q: topology key %q is not a label key or claim name: %s", s, term.TopologyKey, strings.Join(msgs, "; "))
	}
	skew, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || skew < 1 {
		return term, fmt.Errorf("--spread %q: maxSkew %q must be a whole number of at least 1; %s", s, parts[1], usage)
	}
	term.MaxSkew = int32(skew)
	seenAction, seenType := false, false
	for _, p := range parts[2:] {
		switch {
		case !seenAction && strings.EqualFold(p, string(clusterv1beta1.DoNotSchedule)):
			term.WhenUnsatisfiable, seenAction = clusterv1beta1.DoNotSchedule, true
		case !seenAction && strings.EqualFold(p, string(clusterv1beta1.ScheduleAnyway)):
			term.WhenUnsatisfiable, seenAction = clusterv1beta1.ScheduleAnyway, true
		case !seenType && strings.EqualFold(p, "claim"):
			term.TopologyKeyType, seenType = clusterv1beta1.TopologyKeyTypeClaim, true
		case !seenType && strings.EqualFold(p, "label"):
			term.TopologyKeyType, seenType = clusterv1beta1.TopologyKeyTypeLabel, true
		default:
			return term, fmt.Errorf("--spread %q: %q is neither DoNotSchedule, ScheduleAnyway, claim nor label (each at most once); %s", s, p, usage)
		}
	}
	return term, nil
}

// taintEffects are the effects --tolerate accepts.
var taintEffects = []clusterv1.TaintEffect{clusterv1.TaintEffectNoSelect, clusterv1.TaintEffectPreferNoSelect, clusterv1.TaintEffectNoSelectIfNew}

// ParseToleration parses one --tolerate value:
// KEY[=VALUE][:EFFECT][:SECONDS]. With a value the operator is Equal,
// without it Exists; KEY * tolerates every key (operator Exists).
func ParseToleration(s string) (clusterv1beta1.Toleration, error) {
	usage := "write KEY[=VALUE][:EFFECT][:SECONDS] with EFFECT NoSelect, PreferNoSelect or NoSelectIfNew, such as cluster.open-cluster-management.io/unreachable:NoSelect:300"
	parts := strings.Split(s, ":")
	if len(parts) > 3 || parts[0] == "" {
		return clusterv1beta1.Toleration{}, fmt.Errorf("--tolerate %q: %s", s, usage)
	}
	t := clusterv1beta1.Toleration{Operator: clusterv1beta1.TolerationOpExists}
	key, value, hasValue := strings.Cut(parts[0], "=")
	switch {
	case key == "*" && hasValue:
		return t, fmt.Errorf("--tolerate %q: * (every key) takes no value", s)
	case key == "*":
	default:
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return t, fmt.Errorf("--tolerate %q: %q is not a taint key: %s", s, key, strings.Join(msgs, "; "))
		}
		t.Key = key
	}
	if hasValue {
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			return t, fmt.Errorf("--tolerate %q: %q is not a taint value: %s", s, value, strings.Join(msgs, "; "))
		}
		t.Operator, t.Value = clusterv1beta1.TolerationOpEqual, value
	}
	seenEffect, seenSeconds := false, false
	for _, p := range parts[1:] {
		if n, err := strconv.ParseInt(p, 10, 64); err == nil && !seenSeconds {
			if n < 0 {
				return t, fmt.Errorf("--tolerate %q: seconds %d must not be negative", s, n)
			}
			t.TolerationSeconds, seenSeconds = &n, true
			continue
		}
		matched := false
		for _, e := range taintEffects {
			if !seenEffect && strings.EqualFold(p, string(e)) {
				t.Effect, seenEffect, matched = e, true, true
			}
		}
		if !matched {
			return t, fmt.Errorf("--tolerate %q: %q is neither an effect nor a number of seconds; %s", s, p, usage)
		}
	}
	if t.TolerationSeconds != nil && t.Effect == clusterv1.TaintEffectNoSelectIfNew {
		return t, fmt.Errorf("--tolerate %q: seconds apply to NoSelect and PreferNoSelect taints only", s)
	}
	return t, nil
}
