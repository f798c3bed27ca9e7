package replicaset

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// writeStatus fills in the summaries and the three conditions from the
// plans and the ManifestWorks by cluster. want and ctl are nil when the
// desired specs are unknown (invalid overrides): the updated counts are then
// kept and the rollout is not judged.
func writeStatus(mwrs *workv1alpha1.ManifestWorkReplicaSet, plans []*plan, works map[string]*workv1.ManifestWork, want map[string]desired, ctl *control) {
	t := tallyPlans(mwrs, plans, works, want, ctl)
	setPlacementVerified(mwrs, t)
	if want == nil {
		// Invalid overrides: the rollout is on hold; keep the conditions
		// that judge it.
		return
	}
	setRolledOut(mwrs, t, ctl)
	setManifestworkApplied(mwrs, t)
}

// tally is what the plans add up to, for the conditions to judge.
type tally struct {
	total workv1alpha1.ManifestWorkReplicaSetSummary
	// missing and undecided name placements without decisions or clusters.
	missing, undecided []string
	// invalid, rolling and waiting describe the rollouts that are not
	// complete: an invalid strategy, in progress, waiting for an approval.
	invalid, rolling, waiting []string
	// held counts the clusters the rollouts hold back.
	held int
	// notApplied counts the ManifestWorks whose Applied condition is False.
	notApplied int
	// complete is true when every valid rollout is complete.
	complete bool
}

// tallyPlans writes the summaries of every placement and their total, and
// adds up what the conditions are judged from.
func tallyPlans(mwrs *workv1alpha1.ManifestWorkReplicaSet, plans []*plan, works map[string]*workv1.ManifestWork, want map[string]desired, ctl *control) tally {
	previous := map[string]workv1alpha1.ManifestWorkReplicaSetSummary{}
	for _, ps := range mwrs.Status.PlacementsSummary {
		previous[ps.Name] = ps.Summary
	}
	t := tally{complete: true}
	summaries := []workv1alpha1.PlacementSummary{}
	for _, p := range plans {
		ps, notApplied := summarize(p, works, want, previous[p.ref.Name])
		summaries = append(summaries, ps)
		add(&t.total, ps.Summary)
		t.notApplied += notApplied
		switch {
		case !p.decisions.found:
			t.missing = append(t.missing, fmt.Sprintf("Placement %s not found", p.ref.Name))
		case p.decisions.decisionObjects == 0:
			t.missing = append(t.missing, fmt.Sprintf("Placement %s has no PlacementDecision", p.ref.Name))
		case len(p.owned) == 0:
			t.undecided = append(t.undecided, p.ref.Name)
		}
		switch {
		case p.err != nil:
			t.invalid = append(t.invalid, fmt.Sprintf("placement %s: %v", p.ref.Name, p.err))
		case !p.result.Complete:
			t.complete = false
			t.rolling = append(t.rolling, describeRollout(p))
			t.held += p.result.Held
			if w := p.result.Waiting; w != nil {
				t.waiting = append(t.waiting, fmt.Sprintf("placement %s waits for approval %s of revision %d: approve it with `kubectl ocm work rollout approve %s -n %s --placement %s --stage %s`",
					p.ref.Name, w, ctl.rev.number, mwrs.Name, mwrs.Namespace, p.ref.Name, w.Stage))
			}
		}
	}
	mwrs.Status.Summary = t.total
	mwrs.Status.PlacementsSummary = summaries
	return t
}

// summarize counts the ManifestWorks of one placement's clusters and its
// available decision groups, and returns how many of its works are not
// applied. Without want, the updated count is kept from previous.
func summarize(p *plan, works map[string]*workv1.ManifestWork, want map[string]desired, previous workv1alpha1.ManifestWorkReplicaSetSummary) (workv1alpha1.PlacementSummary, int) {
	s := workv1alpha1.ManifestWorkReplicaSetSummary{DesiredTotal: len(p.owned)}
	notApplied := 0
	for _, c := range p.owned {
		mw := works[c]
		if mw == nil {
			continue
		}
		s.Total++
		count(&s.Applied, conditionTrue(mw, workv1.WorkApplied))
		count(&s.Available, conditionTrue(mw, workv1.WorkAvailable))
		count(&s.Progressing, conditionTrue(mw, workv1.WorkProgressing))
		count(&s.Degraded, conditionTrue(mw, workv1.WorkDegraded))
		if want != nil {
			count(&s.Updated, mw.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] == want[c].hash)
		}
		if c := meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse {
			notApplied++
		}
	}
	if want == nil {
		s.Updated = previous.Updated
	}
	availableGroups := 0
	for _, g := range p.groups {
		ok := true
		for _, c := range g.Clusters {
			ok = ok && works[c] != nil && conditionTrue(works[c], workv1.WorkAvailable)
		}
		count(&availableGroups, ok)
	}
	return workv1alpha1.PlacementSummary{
		Name: p.ref.Name, Summary: s, AvailableDecisionGroups: fmt.Sprintf("%d/%d", availableGroups, len(p.groups)),
	}, notApplied
}

// setPlacementVerified sets PlacementVerified: every placement exists and
// has decisions, and together they decide at least one cluster.
func setPlacementVerified(mwrs *workv1alpha1.ManifestWorkReplicaSet, t tally) {
	const verified = workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified
	switch {
	case len(t.missing) > 0:
		setCondition(mwrs, verified, false, workv1alpha1.ReasonPlacementDecisionNotFound, strings.Join(t.missing, "; "))
	case t.total.DesiredTotal == 0:
		setCondition(mwrs, verified, false, workv1alpha1.ReasonPlacementDecisionEmpty, "the placements decided no cluster")
	default:
		msg := fmt.Sprintf("%d clusters decided", t.total.DesiredTotal)
		if len(t.undecided) > 0 {
			msg += "; no cluster decided by " + strings.Join(t.undecided, ", ")
		}
		setCondition(mwrs, verified, true, workv1alpha1.ReasonAsExpected, msg)
	}
}

// setRolledOut sets PlacementRolledOut: complete, or why not (an invalid
// strategy, aborted, paused, waiting for an approval, in progress).
func setRolledOut(mwrs *workv1alpha1.ManifestWorkReplicaSet, t tally, ctl *control) {
	const rolledOut = workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut
	switch {
	case len(t.invalid) > 0:
		setCondition(mwrs, rolledOut, false, workv1alpha1.ReasonInvalidRolloutStrategy, strings.Join(t.invalid, "; "))
	case ctl.err != nil:
		setCondition(mwrs, rolledOut, false, workv1alpha1.ReasonInvalidRolloutStrategy, "no cluster is started until it is fixed: "+ctl.err.Error())
	case t.complete:
		setCondition(mwrs, rolledOut, true, workv1alpha1.ReasonComplete, fmt.Sprintf("%d clusters rolled out", t.total.DesiredTotal))
	case ctl.aborted():
		setCondition(mwrs, rolledOut, false, rolloutv1alpha1.ReasonAborted, fmt.Sprintf(
			"the rollout of revision %d was aborted: %d clusters not started; roll back with `kubectl ocm work rollout undo %s -n %s`, or change the template",
			ctl.rev.number, t.held, mwrs.Name, mwrs.Namespace))
	case ctl.policy.Paused:
		setCondition(mwrs, rolledOut, false, rolloutv1alpha1.ReasonPaused, fmt.Sprintf(
			"the rollout of revision %d is paused: %d clusters wait; resume it with `kubectl ocm work rollout resume %s -n %s`",
			ctl.rev.number, t.held, mwrs.Name, mwrs.Namespace))
	case len(t.waiting) > 0:
		setCondition(mwrs, rolledOut, false, rolloutv1alpha1.ReasonAwaitingApproval, strings.Join(t.waiting, "; "))
	default:
		setCondition(mwrs, rolledOut, false, workv1alpha1.ReasonProgressing, strings.Join(t.rolling, "; "))
	}
}

// setManifestworkApplied sets ManifestworkApplied: every decided cluster
// has an up-to-date ManifestWork that is applied.
func setManifestworkApplied(mwrs *workv1alpha1.ManifestWorkReplicaSet, t tally) {
	const applied = workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied
	total := t.total
	switch {
	case t.notApplied > 0:
		setCondition(mwrs, applied, false, workv1alpha1.ReasonNotAsExpected, fmt.Sprintf("%d ManifestWorks are not applied", t.notApplied))
	case total.Total == total.DesiredTotal && total.Applied == total.Total && total.Updated == total.Total:
		setCondition(mwrs, applied, true, workv1alpha1.ReasonAsExpected, fmt.Sprintf("%d ManifestWorks applied", total.Total))
	default:
		setCondition(mwrs, applied, false, workv1alpha1.ReasonProcessing, fmt.Sprintf("%d of %d ManifestWorks created, %d up to date, %d applied",
			total.Total, total.DesiredTotal, total.Updated, total.Applied))
	}
}

// describeRollout says where an unfinished rollout of a placement stands.
func describeRollout(p *plan) string {
	r := p.result
	msg := fmt.Sprintf("placement %s: %d clusters in the rollout window", p.ref.Name, len(r.ToApply))
	if len(r.TimedOut) > 0 {
		names := make([]string, 0, len(r.TimedOut))
		for _, c := range r.TimedOut {
			names = append(names, c.Name)
		}
		msg += ", timed out: " + joinLimited(names)
	}
	if r.Held > 0 {
		msg += fmt.Sprintf(", %d held", r.Held)
	}
	if r.MaxFailuresBreached {
		msg += "; stopped: failures exceed maxFailures"
	}
	return msg
}

// count adds one to n when ok.
func count(n *int, ok bool) {
	if ok {
		*n++
	}
}

// add adds s to total.
func add(total *workv1alpha1.ManifestWorkReplicaSetSummary, s workv1alpha1.ManifestWorkReplicaSetSummary) {
	total.Total += s.Total
	total.DesiredTotal += s.DesiredTotal
	total.Applied += s.Applied
	total.Available += s.Available
	total.Progressing += s.Progressing
	total.Degraded += s.Degraded
	total.Updated += s.Updated
}

// setCondition sets a condition observed at the current generation.
func setCondition(mwrs *workv1alpha1.ManifestWorkReplicaSet, typ string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&mwrs.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: mwrs.Generation,
	})
}

// hasCondition reports whether the condition typ already has reason and msg.
func hasCondition(mwrs *workv1alpha1.ManifestWorkReplicaSet, typ, reason, msg string) bool {
	c := meta.FindStatusCondition(mwrs.Status.Conditions, typ)
	return c != nil && c.Reason == reason && c.Message == msg
}
