package rollout

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// settings are the parsed knobs of a strategy.
type settings struct {
	minSuccess     time.Duration
	deadline       time.Duration
	forever        bool
	maxFailures    intstr.IntOrString
	maxConcurrency intstr.IntOrString
	mandatory      []clusterv1alpha1.MandatoryDecisionGroup
}

// entry is one cluster classified against the clock.
type entry struct {
	Cluster
	// pending: ToApply, waiting for a slot.
	pending bool
	// active: in the rollout window (Progressing, Failed, soaking).
	active bool
	// failure: Failed or TimeOut.
	failure bool
	// held: ToApply, held at a gate or by Input.Hold.
	held bool
	// recheck is when the entry changes by the clock alone; zero if never.
	recheck time.Time
}

// Compute decides which clusters of in.Groups to roll out to now under
// in.Strategy. It is pure: the same input gives the same result.
func Compute(in Input) (Result, error) {
	s, err := parseStrategy(in.Strategy)
	if err != nil {
		return Result{}, err
	}
	groups := orderGroups(in.Groups)
	all := make([][]entry, len(groups))
	for i, g := range groups {
		all[i] = make([]entry, 0, len(g.Clusters))
		for _, name := range g.Clusters {
			all[i] = append(all[i], classify(name, g, in.States[name], s, in.Now))
		}
	}
	if err := checkGates(in.Gates, in.Strategy.Type); err != nil {
		return Result{}, err
	}
	size := 0
	if in.Gates != nil {
		size = in.Gates.StageSize
	}
	stages := buildStages(groups, all, s.mandatory, size)
	waiting := applyGates(stages, in.Gates, in.Hold)
	r := &builder{now: in.Now}
	for _, es := range all {
		r.keepActive(es)
	}
	switch typ := in.Strategy.Type; typ {
	case "", clusterv1alpha1.All:
		for _, es := range all {
			r.start(es, len(es))
		}
	case clusterv1alpha1.Progressive, clusterv1alpha1.ProgressivePerGroup:
		rest, mandatoryDone := r.mandatory(groups, all, s.mandatory)
		if mandatoryDone {
			if typ == clusterv1alpha1.Progressive {
				err = r.progressive(rest, countClusters(all), s)
			} else {
				err = r.perGroup(rest, s)
			}
		}
		if err != nil {
			return Result{}, err
		}
	default:
		return Result{}, fmt.Errorf("unknown rollout strategy type %q", typ)
	}
	res := r.result(all)
	res.Stages, res.Waiting = stageResults(stages, in.Gates, waiting), waiting
	if waiting != nil {
		res.Complete = false
	}
	return res, nil
}

// parseStrategy reads the settings of the strategy's type.
func parseStrategy(st clusterv1alpha1.RolloutStrategy) (settings, error) {
	var s settings
	cfg := strategyConfig(st)
	switch st.Type {
	case clusterv1alpha1.Progressive:
		if p := st.Progressive; p != nil {
			s.maxConcurrency = p.MaxConcurrency
			s.mandatory = p.MandatoryDecisionGroups.MandatoryDecisionGroups
		}
	case clusterv1alpha1.ProgressivePerGroup:
		if p := st.ProgressivePerGroup; p != nil {
			s.mandatory = p.MandatoryDecisionGroups.MandatoryDecisionGroups
		}
	}
	s.forever = true
	if cfg == nil {
		return s, nil
	}
	d, forever, err := cfg.ProgressDeadlineDuration()
	if err != nil {
		return s, err
	}
	s.deadline, s.forever = d, forever
	s.minSuccess = cfg.MinSuccessTime.Duration
	s.maxFailures = cfg.MaxFailures
	if _, err := size(s.maxFailures, 1, 0); err != nil {
		return s, fmt.Errorf("invalid maxFailures: %w", err)
	}
	if _, err := size(s.maxConcurrency, 1, 1); err != nil {
		return s, fmt.Errorf("invalid maxConcurrency: %w", err)
	}
	return s, nil
}

// strategyConfig returns the RolloutConfig of st's type, nil without one.
// All starts everything at once: only its deadline applies.
func strategyConfig(st clusterv1alpha1.RolloutStrategy) *clusterv1alpha1.RolloutConfig {
	switch st.Type {
	case "", clusterv1alpha1.All:
		if st.All != nil {
			return &clusterv1alpha1.RolloutConfig{ProgressDeadline: st.All.ProgressDeadline}
		}
	case clusterv1alpha1.Progressive:
		if st.Progressive != nil {
			return &st.Progressive.RolloutConfig
		}
	case clusterv1alpha1.ProgressivePerGroup:
		if st.ProgressivePerGroup != nil {
			return &st.ProgressivePerGroup.RolloutConfig
		}
	}
	return nil
}

// size resolves a number or percentage of total, rounding percentages up.
// Zero, or more than total, gives def.
func size(v intstr.IntOrString, total, def int) (int, error) {
	n := 0
	switch {
	case v.Type == intstr.Int:
		n = int(v.IntVal)
	case strings.HasSuffix(v.StrVal, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
		if err != nil || f < 0 {
			return def, fmt.Errorf("%q is not a percentage", v.StrVal)
		}
		n = int(math.Ceil(f / 100 * float64(total)))
	case v.StrVal == "":
	default:
		i, err := strconv.Atoi(v.StrVal)
		if err != nil {
			return def, fmt.Errorf("%q is neither a number nor a percentage", v.StrVal)
		}
		n = i
	}
	if n <= 0 || n > total {
		return def, nil
	}
	return n, nil
}

// orderGroups sorts groups by index, sorts each group's clusters by name
// and keeps each cluster only in the first group naming it.
func orderGroups(in []Group) []Group {
	groups := make([]Group, len(in))
	copy(groups, in)
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].Index < groups[j].Index })
	seen := map[string]bool{}
	for i := range groups {
		clusters := append([]string(nil), groups[i].Clusters...)
		sort.Strings(clusters)
		kept := clusters[:0]
		for _, c := range clusters {
			if c != "" && !seen[c] {
				seen[c] = true
				kept = append(kept, c)
			}
		}
		groups[i].Clusters = kept
	}
	return groups
}

// classify turns a cluster's state into an entry at now.
func classify(name string, g Group, cs ClusterState, s settings, now time.Time) entry {
	st := cs.State
	if st == "" {
		st = ToApply
	}
	since := cs.Since
	if since.IsZero() {
		since = now
	}
	e := entry{Cluster: Cluster{Name: name, GroupIndex: g.Index, GroupName: g.Name, State: st, Since: cs.Since}}
	switch st {
	case ToApply:
		e.pending = true
	case Progressing, Failed:
		e.failure = st == Failed
		if !s.forever {
			end := since.Add(s.deadline)
			if !now.Before(end) {
				e.State, e.failure = TimeOut, true
				return e
			}
			e.recheck = end
		}
		e.active = true
	case Succeeded:
		if end := since.Add(s.minSuccess); s.minSuccess > 0 && now.Before(end) {
			e.active, e.recheck = true, end
		}
	case TimeOut:
		e.failure = true
	}
	return e
}

// countClusters counts the entries of every group.
func countClusters(all [][]entry) int {
	n := 0
	for _, es := range all {
		n += len(es)
	}
	return n
}
