package placement

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// Scheduler schedules placements. It caches compiled CEL selectors across
// runs, so one Scheduler should be shared by all placements. It is safe for
// concurrent use.
type Scheduler struct {
	cel celCache
}

// NewScheduler returns a Scheduler.
func NewScheduler() *Scheduler { return &Scheduler{} }

// run is the state of one Schedule call.
type run struct {
	cel *celCache
	in  Input
	p   *clusterv1beta1.Placement
	// clusters are in.Clusters sorted by name, without duplicates; every
	// per-cluster slice below is indexed like it.
	clusters  []*clusterv1.ManagedCluster
	expl      []Explanation
	claimSets []labels.Set
	celVals   []*clusterValue
	// scores are the AddOnPlacementScores by cluster namespace and name.
	scores  map[scoreKey]*clusterv1alpha1.AddOnPlacementScore
	decided map[string]bool
	requeue time.Time
}

// Schedule runs every scheduling step for in.Placement and returns the
// decisions, the status conditions and an explanation per cluster.
func (s *Scheduler) Schedule(in Input) Result {
	if in.Placement == nil {
		return Result{Groups: []Group{{Decisions: []clusterv1beta1.ClusterDecision{}}}}
	}
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	r := newRun(in)
	r.cel = &s.cel
	spec := &in.Placement.Spec
	cfg, cfgErr := s.compile(spec)

	cands := r.candidates()
	available := len(cands.members)
	var selected []int
	feasible := 0
	if cfgErr != nil {
		for _, i := range cands.members {
			r.exclude(i, StageMisconfigured, "the placement is misconfigured: "+cfgErr.Error())
		}
	} else {
		if cfg.usesCEL || hasAddOn(cfg.prioritizers) {
			r.indexScores()
		}
		passed := r.filterPredicates(cands.members, cfg.predicates)
		passed = r.filterTaints(passed, spec.Tolerations)
		feasible = len(passed)
		ranked := r.score(passed, cfg.prioritizers)
		n := -1
		if spec.NumberOfClusters != nil {
			n = int(*spec.NumberOfClusters)
		}
		selected = r.pick(ranked, n, cfg.spread)
	}
	r.orderDecisions(selected, spec.SortBy)
	r.explainSelected(selected)

	per := func(total int) int {
		n, _ := groupLength(spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup, total)
		return n
	}
	res := Result{
		Groups:   r.groups(selected, &cfg, per),
		Clusters: r.expl,
		Selected: len(selected),
	}
	wanted := feasible
	if spec.NumberOfClusters != nil {
		wanted = int(*spec.NumberOfClusters)
	}
	res.Satisfied = satisfiedCondition(spec.ClusterSets, cands, available, len(selected), wanted-len(selected))
	res.Misconfigured = misconfiguredCondition(cfgErr)
	if !r.requeue.IsZero() {
		res.RequeueAfter = r.requeue.Sub(in.Now)
	}
	return res
}

// newRun sorts and deduplicates the clusters and prepares the per-cluster state.
func newRun(in Input) *run {
	clusters := make([]*clusterv1.ManagedCluster, 0, len(in.Clusters))
	for _, c := range in.Clusters {
		if c != nil {
			clusters = append(clusters, c)
		}
	}
	sort.Slice(clusters, func(a, b int) bool { return clusters[a].Name < clusters[b].Name })
	uniq := clusters[:0]
	for k, c := range clusters {
		if k == 0 || c.Name != clusters[k-1].Name {
			uniq = append(uniq, c)
		}
	}
	r := &run{
		in:        in,
		p:         in.Placement,
		clusters:  uniq,
		expl:      make([]Explanation, len(uniq)),
		claimSets: make([]labels.Set, len(uniq)),
		celVals:   make([]*clusterValue, len(uniq)),
		decided:   make(map[string]bool, len(in.Decided)),
	}
	for k, c := range uniq {
		r.expl[k].Cluster = c.Name
	}
	for _, name := range in.Decided {
		r.decided[name] = true
	}
	return r
}

// indexScores indexes the AddOnPlacementScores by cluster namespace and name.
func (r *run) indexScores() {
	r.scores = make(map[scoreKey]*clusterv1alpha1.AddOnPlacementScore, len(r.in.Scores))
	for _, s := range r.in.Scores {
		if s != nil {
			r.scores[scoreKey{namespace: s.Namespace, name: s.Name}] = s
		}
	}
}

// scoreKey identifies an AddOnPlacementScore.
type scoreKey struct{ namespace, name string }

// hasAddOn reports whether an add-on prioritizer is enabled.
func hasAddOn(prs []prioritizer) bool {
	for _, p := range prs {
		if p.kind == kindAddOn {
			return true
		}
	}
	return false
}

// exclude records the stage and reason that excluded cluster i.
func (r *run) exclude(i int, stage Stage, reason string) {
	r.expl[i].Stage = stage
	r.expl[i].Reason = reason
}

// excludeAll excludes every cluster at one stage.
func (r *run) excludeAll(stage Stage, reason string) {
	for i := range r.expl {
		r.exclude(i, stage, reason)
	}
}

// explainSelected marks the selected clusters, naming their rank by score.
func (r *run) explainSelected(selected []int) {
	byScore := append([]int(nil), selected...)
	sort.SliceStable(byScore, func(a, b int) bool {
		ta, tb := r.expl[byScore[a]].Total, r.expl[byScore[b]].Total
		if ta != tb {
			return ta > tb
		}
		return byScore[a] < byScore[b]
	})
	for k, i := range byScore {
		e := &r.expl[i]
		e.Selected = true
		e.Stage = StageSelected
		e.Reason = fmt.Sprintf("selected, rank %d of %d with score %d", k+1, len(selected), e.Total)
	}
}

// requeueAt records a future time at which the result changes by itself.
func (r *run) requeueAt(t time.Time) {
	if t.After(r.in.Now) && (r.requeue.IsZero() || t.Before(r.requeue)) {
		r.requeue = t
	}
}

// satisfiedCondition is the PlacementSatisfied condition, with OCM's reasons
// and messages.
func satisfiedCondition(specSets []string, cands candidateSets, available, selected, unscheduled int) metav1.Condition {
	c := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionFalse}
	switch {
	case len(cands.bound) == 0:
		c.Reason = clusterv1beta1.ReasonNoManagedClusterSetBindings
		c.Message = "No valid ManagedClusterSetBindings found in placement namespace"
	case len(cands.eligible) == 0:
		c.Reason = clusterv1beta1.ReasonNoIntersection
		c.Message = fmt.Sprintf("None of ManagedClusterSets [%s] is bound to placement namespace", strings.Join(specSets, ","))
	case available == 0:
		c.Reason = clusterv1beta1.ReasonAllManagedClusterSetsEmpty
		c.Message = fmt.Sprintf("All ManagedClusterSets [%s] have no member ManagedCluster", strings.Join(cands.eligible, ","))
	case selected == 0:
		c.Reason = clusterv1beta1.ReasonNoManagedClusterMatched
		c.Message = "No ManagedCluster matches any of the cluster predicate"
	case unscheduled <= 0:
		c.Status = metav1.ConditionTrue
		c.Reason = clusterv1beta1.ReasonAllDecisionsScheduled
		c.Message = "All cluster decisions scheduled"
	default:
		c.Reason = clusterv1beta1.ReasonNotAllDecisionsScheduled
		c.Message = fmt.Sprintf("%d cluster decisions unscheduled", unscheduled)
	}
	return c
}

// misconfiguredCondition is the PlacementMisconfigured condition.
func misconfiguredCondition(err *configError) metav1.Condition {
	if err != nil {
		return metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionTrue,
			Reason: clusterv1beta1.ReasonMisconfigured, Message: err.Error()}
	}
	return metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse,
		Reason: clusterv1beta1.ReasonSucceedconfigured, Message: "Placement configurations check pass"}
}
