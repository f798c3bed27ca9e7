package placement

import (
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// claims returns cluster i's claims as a label set, computed once per run.
func (r *run) claims(i int) labels.Set {
	if r.claimSets[i] == nil {
		r.claimSets[i] = claimSet(r.clusters[i])
	}
	return r.claimSets[i]
}

// celValue returns cluster i converted for CEL, computed once per run.
func (r *run) celValue(i int) (*clusterValue, error) {
	if r.celVals[i] != nil {
		return r.celVals[i], nil
	}
	c := r.clusters[i]
	cv, err := r.cel.newClusterValue(c, r.scores)
	if err != nil {
		return nil, err
	}
	r.celVals[i] = cv
	return cv, nil
}

// filterPredicates keeps the candidates matching at least one predicate and
// explains the others (StagePredicate). No predicates keeps every candidate.
func (r *run) filterPredicates(candidates []int, preds []compiledPredicate) []int {
	if len(preds) == 0 {
		return candidates
	}
	var out []int
	var why []string
	for _, i := range candidates {
		why = why[:0]
		matched := false
		for k := range preds {
			msg := r.matchPredicate(i, &preds[k])
			if msg == "" {
				matched = true
				break
			}
			why = append(why, "predicate "+strconv.Itoa(k)+": "+msg)
		}
		if matched {
			out = append(out, i)
			continue
		}
		r.exclude(i, StagePredicate, strings.Join(why, "; "))
	}
	return out
}

// matchPredicate returns "" when cluster i matches the predicate, or why not.
func (r *run) matchPredicate(i int, p *compiledPredicate) string {
	c := r.clusters[i]
	var claims labels.Set
	if p.sel.usesClaims() {
		claims = r.claims(i)
	}
	if !p.sel.matches(c, claims) {
		return p.sel.mismatch(c, claims)
	}
	if len(p.progs) == 0 {
		return ""
	}
	cv, err := r.celValue(i)
	if err != nil {
		return err.Error()
	}
	for k, prg := range p.progs {
		if ok, why := evalCEL(prg, cv); !ok {
			return "CEL expression " + strconv.Itoa(k) + " " + strconv.Quote(p.exprs[k]) + " " + why
		}
	}
	return ""
}

// filterTaints keeps the clusters whose taints the placement tolerates and
// explains the others (StageTaint). A tolerated taint whose toleration
// expires later makes the run requeue at that time.
func (r *run) filterTaints(clusters []int, tolerations []clusterv1beta1.Toleration) []int {
	var out []int
	for _, i := range clusters {
		c := r.clusters[i]
		if len(c.Spec.Taints) == 0 {
			out = append(out, i)
			continue
		}
		decided := r.decided[c.Name]
		var expiries []time.Time
		why := ""
		for _, t := range c.Spec.Taints {
			ok, until, msg := r.tolerated(t, tolerations, decided)
			if !ok {
				why = msg
				break
			}
			if !until.IsZero() {
				expiries = append(expiries, until)
			}
		}
		if why != "" {
			r.exclude(i, StageTaint, why)
			continue
		}
		for _, t := range expiries {
			r.requeueAt(t)
		}
		out = append(out, i)
	}
	return out
}

// tolerated reports whether the taint lets the placement select the cluster.
// PreferNoSelect never excludes and NoSelectIfNew excludes only clusters not
// already decided. until is when the tolerating toleration expires (zero for
// never); msg explains a taint that is not tolerated.
func (r *run) tolerated(t clusterv1.Taint, tolerations []clusterv1beta1.Toleration, decided bool) (ok bool, until time.Time, msg string) {
	switch {
	case t.Effect == clusterv1.TaintEffectPreferNoSelect:
		return true, time.Time{}, ""
	case t.Effect == clusterv1.TaintEffectNoSelectIfNew && decided:
		return true, time.Time{}, ""
	}
	var expired time.Time
	for _, tol := range tolerations {
		if !tolerationMatches(t, tol) {
			continue
		}
		if tol.TolerationSeconds == nil {
			return true, time.Time{}, ""
		}
		end := t.TimeAdded.Add(time.Duration(*tol.TolerationSeconds) * time.Second)
		if r.in.Now.Before(end) {
			return true, end, ""
		}
		if end.After(expired) {
			expired = end
		}
	}
	msg = "taint " + formatTaint(t) + " is not tolerated"
	if !expired.IsZero() {
		msg += " (its toleration expired at " + expired.UTC().Format(time.RFC3339) + ")"
	}
	return false, time.Time{}, msg
}

// tolerationMatches reports whether a toleration matches a taint's key,
// effect and value; tolerationSeconds is not considered.
func tolerationMatches(t clusterv1.Taint, tol clusterv1beta1.Toleration) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case clusterv1beta1.TolerationOpExists:
		return true
	case "", clusterv1beta1.TolerationOpEqual:
		return tol.Value == t.Value
	}
	return false
}
