package placement

import (
	"fmt"
	"sort"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// Score bounds of a prioritizer.
const (
	maxScore = 100
	minScore = -100
)

// prioritizerKind is the scoring rule of a prioritizer.
type prioritizerKind int

const (
	kindBalance prioritizerKind = iota
	kindSteady
	kindCPU
	kindMemory
	kindAddOn
)

// builtIns maps the built-in prioritizer names to their rules.
var builtIns = map[string]prioritizerKind{
	clusterv1beta1.PrioritizerBalance:                   kindBalance,
	clusterv1beta1.PrioritizerSteady:                    kindSteady,
	clusterv1beta1.PrioritizerResourceAllocatableCPU:    kindCPU,
	clusterv1beta1.PrioritizerResourceAllocatableMemory: kindMemory,
}

// prioritizer is one enabled prioritizer with its weight.
type prioritizer struct {
	// key names the prioritizer in Explanation.Scores: "BuiltIn:<name>" or
	// "AddOn:<resourceName>:<scoreName>".
	key      string
	kind     prioritizerKind
	resource string
	score    string
	weight   int64
}

// ScoreKeyBuiltIn returns the Explanation.Scores key of a built-in prioritizer.
func ScoreKeyBuiltIn(name string) string {
	return clusterv1beta1.ScoreCoordinateTypeBuiltIn + ":" + name
}

// ScoreKeyAddOn returns the Explanation.Scores key of an add-on score.
func ScoreKeyAddOn(resourceName, scoreName string) string {
	return clusterv1beta1.ScoreCoordinateTypeAddOn + ":" + resourceName + ":" + scoreName
}

// compilePrioritizers resolves the weights of the prioritizer policy: in
// Additive mode Balance and Steady weigh 1 unless configured, in Exact mode
// only configured prioritizers count. Prioritizers of weight 0 are dropped.
func compilePrioritizers(policy *clusterv1beta1.PrioritizerPolicy) ([]prioritizer, *configError) {
	var out []prioritizer
	index := map[string]int{}
	set := func(p prioritizer) {
		if i, ok := index[p.key]; ok {
			out[i].weight = p.weight
			return
		}
		index[p.key] = len(out)
		out = append(out, p)
	}
	if policy.Mode != clusterv1beta1.PrioritizerPolicyModeExact {
		for _, name := range []string{clusterv1beta1.PrioritizerBalance, clusterv1beta1.PrioritizerSteady} {
			set(prioritizer{key: ScoreKeyBuiltIn(name), kind: builtIns[name], weight: clusterv1beta1.DefaultPrioritizerWeight})
		}
	}
	for i, c := range policy.Configurations {
		sc := c.ScoreCoordinate
		if sc == nil {
			return nil, &configError{"Prioritizer", fmt.Sprintf("configuration %d: scoreCoordinate is required", i)}
		}
		switch sc.Type {
		case "", clusterv1beta1.ScoreCoordinateTypeBuiltIn:
			kind, ok := builtIns[sc.BuiltIn]
			if !ok {
				return nil, &configError{"Prioritizer", fmt.Sprintf("configuration %d: incorrect builtin prioritizer: %s", i, sc.BuiltIn)}
			}
			set(prioritizer{key: ScoreKeyBuiltIn(sc.BuiltIn), kind: kind, weight: int64(c.Weight)})
		case clusterv1beta1.ScoreCoordinateTypeAddOn:
			if sc.AddOn == nil || sc.AddOn.ResourceName == "" || sc.AddOn.ScoreName == "" {
				return nil, &configError{"Prioritizer", fmt.Sprintf("configuration %d: addOn should name a resourceName and a scoreName", i)}
			}
			set(prioritizer{key: ScoreKeyAddOn(sc.AddOn.ResourceName, sc.AddOn.ScoreName), kind: kindAddOn,
				resource: sc.AddOn.ResourceName, score: sc.AddOn.ScoreName, weight: int64(c.Weight)})
		default:
			return nil, &configError{"Prioritizer", fmt.Sprintf("configuration %d: incorrect score coordinate type: %s", i, sc.Type)}
		}
	}
	enabled := out[:0]
	for _, p := range out {
		if p.weight != 0 {
			enabled = append(enabled, p)
		}
	}
	return enabled, nil
}

// score computes every prioritizer's raw score for the feasible clusters,
// records them in the explanations and returns the feasible clusters ranked
// by total score, descending, ties by name.
func (r *run) score(feasible []int, prs []prioritizer) []int {
	for _, i := range feasible {
		r.expl[i].Scores = make(map[string]int64, len(prs))
	}
	raw := make([]int64, len(feasible))
	for _, p := range prs {
		switch p.kind {
		case kindBalance:
			r.scoreBalance(feasible, raw)
		case kindSteady:
			for k, i := range feasible {
				raw[k] = 0
				if r.decided[r.clusters[i].Name] {
					raw[k] = maxScore
				}
			}
		case kindCPU:
			r.scoreResource(feasible, raw, clusterv1.ResourceCPU)
		case kindMemory:
			r.scoreResource(feasible, raw, clusterv1.ResourceMemory)
		case kindAddOn:
			r.scoreAddOn(feasible, raw, p)
		}
		for k, i := range feasible {
			e := &r.expl[i]
			e.Scores[p.key] = raw[k]
			e.Total += raw[k] * p.weight
		}
	}
	ranked := append([]int(nil), feasible...)
	sort.SliceStable(ranked, func(a, b int) bool {
		return r.expl[ranked[a]].Total > r.expl[ranked[b]].Total
	})
	return ranked
}

// scoreBalance scores 100 for clusters no other placement decides, and
// 200·(0.5 − count/maxCount) for the others, maxCount being the largest
// number of other placements deciding any cluster.
func (r *run) scoreBalance(feasible []int, raw []int64) {
	maxCount := 0
	for _, n := range r.in.OtherDecisions {
		if n > maxCount {
			maxCount = n
		}
	}
	for k, i := range feasible {
		n := r.in.OtherDecisions[r.clusters[i].Name]
		if n <= 0 || maxCount == 0 {
			raw[k] = maxScore
			continue
		}
		raw[k] = int64(2 * maxScore * (0.5 - float64(n)/float64(maxCount)))
	}
}

// scoreResource scores clusters linearly by allocatable resource between
// −100 (the least) and 100 (the most); 100 for all when they are equal. A
// cluster that does not report the resource has 0 of it.
func (r *run) scoreResource(feasible []int, raw []int64, name clusterv1.ResourceName) {
	vals := make([]float64, len(feasible))
	lo, hi := 0.0, 0.0
	for k, i := range feasible {
		if q, ok := r.clusters[i].Status.Allocatable[name]; ok {
			vals[k] = q.AsApproximateFloat64()
		}
		if k == 0 || vals[k] < lo {
			lo = vals[k]
		}
		if k == 0 || vals[k] > hi {
			hi = vals[k]
		}
	}
	for k := range feasible {
		if hi == lo {
			raw[k] = maxScore
			continue
		}
		raw[k] = int64(((vals[k]-lo)/(hi-lo) - 0.5) * 2 * maxScore)
	}
}

// scoreAddOn scores clusters by the score of their AddOnPlacementScore; 0 when
// it is missing or expired. A future expiry is when scheduling must run again.
func (r *run) scoreAddOn(feasible []int, raw []int64, p prioritizer) {
	for k, i := range feasible {
		raw[k] = 0
		aps := r.scores[scoreKey{namespace: r.clusters[i].Name, name: p.resource}]
		if aps == nil {
			continue
		}
		if vu := aps.Status.ValidUntil; vu != nil {
			if !vu.After(r.in.Now) {
				continue
			}
			r.requeueAt(vu.Time)
		}
		for _, s := range aps.Status.Scores {
			if s.Name == p.score {
				raw[k] = clamp(int64(s.Value))
				break
			}
		}
	}
}

// clamp bounds a score to [−100, 100].
func clamp(v int64) int64 {
	switch {
	case v > maxScore:
		return maxScore
	case v < minScore:
		return minScore
	}
	return v
}

// SteadyWeighted reports whether policy gives the Steady prioritizer a
// weight: then a placement's own decisions are an input of its next
// scheduling run. A policy in error weighs nothing.
func SteadyWeighted(policy *clusterv1beta1.PrioritizerPolicy) bool {
	ps, err := compilePrioritizers(policy)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.kind == kindSteady {
			return true
		}
	}
	return false
}
