package placement

import (
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// PredicateFilter is a placement's spec.predicates compiled to tell, outside
// a scheduling run and without the cluster's scores, whether a cluster may
// pass them. It uses the label and claim selectors of the scheduler itself,
// so it agrees with Schedule exactly on them; a predicate's CEL expressions
// are not evaluated and count as matching. A cluster MayMatch rejects can
// therefore never pass the placement's predicates, and a cluster that
// matches neither before nor after a change cannot alter the placement's
// decisions through that change (see the hub's cluster event handler).
//
// The zero value matches every cluster. A PredicateFilter is read-only
// after NewPredicateFilter and safe for concurrent use.
type PredicateFilter struct {
	// all reports that every cluster may match: no predicates, or a
	// predicate whose selectors do not compile (the placement is then
	// misconfigured; matching everything is the safe side).
	all bool
	// preds are the compiled predicates, ORed.
	preds []labelClaimSelector
}

// NewPredicateFilter compiles the predicates of a placement's spec.
func NewPredicateFilter(predicates []clusterv1beta1.ClusterPredicate) PredicateFilter {
	if len(predicates) == 0 {
		return PredicateFilter{all: true}
	}
	f := PredicateFilter{preds: make([]labelClaimSelector, 0, len(predicates))}
	for i := range predicates {
		sel := &predicates[i].RequiredClusterSelector
		cs, err := compileLabelClaimSelector(&sel.LabelSelector, &sel.ClaimSelector)
		if err != nil {
			return PredicateFilter{all: true}
		}
		if cs.labels == nil && cs.claims == nil {
			// No label or claim selector: only CEL, or nothing, decides.
			return PredicateFilter{all: true}
		}
		f.preds = append(f.preds, cs)
	}
	return f
}

// MatchesAll reports whether the filter lets every cluster through.
func (f PredicateFilter) MatchesAll() bool { return f.all || f.preds == nil }

// MayMatch reports whether cluster c may pass the predicates: whether its
// labels and claims match the label and claim selectors of at least one
// predicate (whose CEL expressions are assumed to hold).
func (f PredicateFilter) MayMatch(c *clusterv1.ManagedCluster) bool {
	if f.MatchesAll() {
		return true
	}
	if c == nil {
		return false
	}
	var claims labels.Set
	for _, sel := range f.preds {
		if sel.usesClaims() && claims == nil {
			claims = claimSet(c)
		}
		if sel.matches(c, claims) {
			return true
		}
	}
	return false
}
