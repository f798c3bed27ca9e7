package placement

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// labelClaimSelector is a compiled label selector and claim selector, ANDed.
// A nil field matches everything.
type labelClaimSelector struct {
	labels labels.Selector
	claims labels.Selector
}

// compileLabelClaimSelector parses a label selector and a claim selector.
// Errors name the selector that failed.
func compileLabelClaimSelector(ls *metav1.LabelSelector, cs *clusterv1beta1.ClusterClaimSelector) (labelClaimSelector, error) {
	var out labelClaimSelector
	if len(ls.MatchLabels) > 0 || len(ls.MatchExpressions) > 0 {
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return out, fmt.Errorf("labelSelector: %w", err)
		}
		out.labels = sel
	}
	if len(cs.MatchExpressions) > 0 {
		sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchExpressions: cs.MatchExpressions})
		if err != nil {
			return out, fmt.Errorf("claimSelector: %w", err)
		}
		out.claims = sel
	}
	return out, nil
}

// usesClaims reports whether the selector reads cluster claims.
func (s labelClaimSelector) usesClaims() bool { return s.claims != nil }

// matches reports whether the cluster's labels and claims match. claims may be
// nil when the selector does not use claims.
func (s labelClaimSelector) matches(c *clusterv1.ManagedCluster, claims labels.Set) bool {
	if s.labels != nil && !s.labels.Matches(labels.Set(c.Labels)) {
		return false
	}
	if s.claims != nil && !s.claims.Matches(claims) {
		return false
	}
	return true
}

// mismatch describes why the cluster does not match, as "label env=prod does
// not match (cluster has env=dev)", or "" when it matches.
func (s labelClaimSelector) mismatch(c *clusterv1.ManagedCluster, claims labels.Set) string {
	if s.labels != nil {
		if msg := describeMismatch("label", s.labels, labels.Set(c.Labels)); msg != "" {
			return msg
		}
	}
	if s.claims != nil {
		if msg := describeMismatch("claim", s.claims, claims); msg != "" {
			return msg
		}
	}
	return ""
}

// describeMismatch names the first requirement of sel that set fails, with
// the value the cluster has for its key.
func describeMismatch(kind string, sel labels.Selector, set labels.Set) string {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Matches(set) {
			continue
		}
		v, ok := set[r.Key()]
		if ok || r.Operator() == selection.DoesNotExist {
			return kind + " " + r.String() + " does not match (cluster has " + r.Key() + "=" + v + ")"
		}
		return kind + " " + r.String() + " does not match (cluster has no " + kind + " " + r.Key() + ")"
	}
	return ""
}

// claimSet returns the cluster's collected claims as a label set.
func claimSet(c *clusterv1.ManagedCluster) labels.Set {
	set := make(labels.Set, len(c.Status.ClusterClaims))
	for _, claim := range c.Status.ClusterClaims {
		set[claim.Name] = claim.Value
	}
	return set
}

// formatTaint renders a taint as key[=value]:effect.
func formatTaint(t clusterv1.Taint) string {
	var b strings.Builder
	b.WriteString(t.Key)
	if t.Value != "" {
		b.WriteByte('=')
		b.WriteString(t.Value)
	}
	b.WriteByte(':')
	b.WriteString(string(t.Effect))
	return b.String()
}
