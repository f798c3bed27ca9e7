package placement

import (
	"fmt"
	"math"
	"strconv"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// spreadConstraint is one spread constraint, with defaults applied.
type spreadConstraint struct {
	index   int
	key     string
	claim   bool
	maxSkew int
	// hard is true for DoNotSchedule.
	hard bool
}

// compileSpread applies the defaults of the spread constraints: maxSkew 1 and
// ScheduleAnyway.
func compileSpread(terms []clusterv1beta1.SpreadConstraintsTerm) []spreadConstraint {
	out := make([]spreadConstraint, 0, len(terms))
	for i, t := range terms {
		c := spreadConstraint{index: i, key: t.TopologyKey, maxSkew: int(t.MaxSkew),
			claim: t.TopologyKeyType == clusterv1beta1.TopologyKeyTypeClaim,
			hard:  t.WhenUnsatisfiable == clusterv1beta1.DoNotSchedule}
		if c.maxSkew < 1 {
			c.maxSkew = 1
		}
		out = append(out, c)
	}
	return out
}

// describe names the constraint in explanations.
func (c spreadConstraint) describe() string {
	kind, mode := "label", clusterv1beta1.ScheduleAnyway
	if c.claim {
		kind = "claim"
	}
	if c.hard {
		mode = clusterv1beta1.DoNotSchedule
	}
	return fmt.Sprintf("spread constraint %d (%s %s, maxSkew %d, %s)", c.index, kind, c.key, c.maxSkew, mode)
}

// domain returns cluster i's topology domain for the constraint.
func (r *run) domain(i int, c spreadConstraint) (string, bool) {
	if c.claim {
		v, ok := r.claims(i)[c.key]
		return v, ok
	}
	v, ok := r.clusters[i].Labels[c.key]
	return v, ok
}

// spreadState counts the selected clusters per domain of one constraint.
type spreadState struct {
	c      spreadConstraint
	counts map[string]int
	min    int
}

// recomputeMin refreshes the smallest count over the eligible domains.
func (s *spreadState) recomputeMin() {
	s.min = math.MaxInt
	for _, n := range s.counts {
		if n < s.min {
			s.min = n
		}
	}
}

// excess is by how much selecting one more cluster in domain d exceeds
// maxSkew (0 when it does not): count(d)+1 − min over domains − maxSkew.
func (s *spreadState) excess(d string) int {
	e := s.counts[d] + 1 - s.min - s.c.maxSkew
	if e < 0 {
		return 0
	}
	return e
}

// pick selects up to n clusters (all when n < 0) from ranked, in score
// order, honoring the spread constraints, and explains the clusters it
// leaves (StageSpread or StageRank).
func (r *run) pick(ranked []int, n int, cons []spreadConstraint) []int {
	if n < 0 || n > len(ranked) {
		n = len(ranked)
	}
	if len(cons) == 0 {
		r.explainRank(ranked[n:], n)
		return ranked[:n]
	}
	states := make([]*spreadState, len(cons))
	var remaining []int
	for k, c := range cons {
		states[k] = &spreadState{c: c, counts: map[string]int{}}
	}
	rank := make(map[int]int, len(ranked))
	for pos, i := range ranked {
		rank[i] = pos
		keep := true
		for _, s := range states {
			d, ok := r.domain(i, s.c)
			if ok {
				s.counts[d] += 0
			} else if s.c.hard && keep {
				keep = false
				r.exclude(i, StageSpread, fmt.Sprintf("%s: cluster has no %s", s.c.describe(), s.c.key))
			}
		}
		if keep {
			remaining = append(remaining, i)
		}
	}
	for _, s := range states {
		s.recomputeMin()
	}
	blockedBy := map[int]*spreadState{}
	var selected []int
	for len(selected) < n && len(remaining) > 0 {
		best := r.leastExcess(remaining, states, blockedBy)
		if best < 0 {
			break
		}
		i := remaining[best]
		delete(blockedBy, i)
		selected = append(selected, i)
		remaining = append(remaining[:best], remaining[best+1:]...)
		for _, s := range states {
			if d, has := r.domain(i, s.c); has {
				s.counts[d]++
				s.recomputeMin()
			}
		}
	}
	r.explainSpread(selected, remaining, rank, blockedBy, n)
	return selected
}

// leastExcess returns the position in remaining of the first cluster that
// exceeds the soft constraints least and no hard one, or -1 when every
// cluster exceeds a hard one; blockedBy records the hard constraint each
// cluster it passed over exceeds.
func (r *run) leastExcess(remaining []int, states []*spreadState, blockedBy map[int]*spreadState) int {
	best, bestExcess := -1, math.MaxInt
	for k, i := range remaining {
		ok, ex := true, 0
		for _, s := range states {
			d, has := r.domain(i, s.c)
			if !has {
				continue
			}
			e := s.excess(d)
			if s.c.hard && e > 0 {
				ok = false
				blockedBy[i] = s
				break
			}
			ex += e
		}
		if ok && ex < bestExcess {
			best, bestExcess = k, ex
			if ex == 0 {
				break
			}
		}
	}
	return best
}

// explainSpread explains the clusters pick left out of selected: a hard
// constraint blocked them, the spread preferred clusters of a lower rank,
// or they ranked below the n wanted.
func (r *run) explainSpread(selected, remaining []int, rank map[int]int, blockedBy map[int]*spreadState, n int) {
	worst := -1
	for _, i := range selected {
		if rank[i] > worst {
			worst = rank[i]
		}
	}
	for _, i := range remaining {
		s, blocked := blockedBy[i]
		switch {
		case blocked && (len(selected) < n || rank[i] < worst):
			d, _ := r.domain(i, s.c)
			r.exclude(i, StageSpread, fmt.Sprintf("%s: %s=%s would have %d selected clusters while another domain has %d",
				s.c.describe(), s.c.key, d, s.counts[d]+1, s.min))
		case rank[i] < worst:
			r.exclude(i, StageSpread, fmt.Sprintf("rank %d, but the spread constraints preferred clusters in other domains", rank[i]+1))
		default:
			r.exclude(i, StageRank, rankReason(rank[i]+1, n))
		}
	}
}

// explainRank explains the scored clusters below the wanted number.
func (r *run) explainRank(rest []int, n int) {
	for k, i := range rest {
		r.exclude(i, StageRank, rankReason(n+k+1, n))
	}
}

// rankReason explains a cluster ranked below the wanted number.
func rankReason(rank, wanted int) string {
	return "rank " + strconv.Itoa(rank) + ", only " + strconv.Itoa(wanted) + " clusters wanted"
}
