package placement

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// candidateSets is the outcome of the candidate step: which cluster sets the
// placement may use and which clusters they hold.
type candidateSets struct {
	// bound are the names of the sets bound to the placement's namespace by a
	// binding whose set exists, sorted.
	bound []string
	// eligible are bound, narrowed by spec.clusterSets, sorted.
	eligible []string
	// members are the indexes (into run.clusters) of the eligible sets'
	// members that are not being deleted, in name order.
	members []int
}

// setMatcher decides membership in one cluster set.
type setMatcher struct {
	name      string
	exclusive bool
	selector  labels.Selector
}

// matches reports whether a cluster with these labels is a member.
func (m setMatcher) matches(l map[string]string) bool {
	if m.exclusive {
		return l[clusterv1beta2.ClusterSetLabel] == m.name
	}
	return m.selector != nil && m.selector.Matches(labels.Set(l))
}

// candidates computes the candidate clusters and explains every cluster that
// is not one (StageClusterSet, StageDeleting).
func (r *run) candidates() candidateSets {
	var out candidateSets
	sets := make(map[string]*clusterv1beta2.ManagedClusterSet, len(r.in.ClusterSets))
	for _, s := range r.in.ClusterSets {
		if s != nil {
			sets[s.Name] = s
		}
	}
	bound := map[string]bool{}
	for _, b := range r.in.Bindings {
		if b == nil || (b.Namespace != "" && b.Namespace != r.p.Namespace) {
			continue
		}
		name := b.Spec.ClusterSet
		if name == "" {
			name = b.Name
		}
		if _, ok := sets[name]; ok {
			bound[name] = true
		}
	}
	for name := range bound {
		out.bound = append(out.bound, name)
	}
	sort.Strings(out.bound)
	if len(out.bound) == 0 {
		r.excludeAll(StageClusterSet, "no ManagedClusterSet is bound to namespace "+r.p.Namespace)
		return out
	}

	wanted := map[string]bool{}
	for _, n := range r.p.Spec.ClusterSets {
		wanted[n] = true
	}
	var eligible, other []setMatcher
	for _, name := range out.bound {
		m := newSetMatcher(sets[name])
		if len(wanted) == 0 || wanted[name] {
			out.eligible = append(out.eligible, name)
			eligible = append(eligible, m)
		} else {
			other = append(other, m)
		}
	}
	if len(out.eligible) == 0 {
		r.excludeAll(StageClusterSet, fmt.Sprintf("none of spec.clusterSets [%s] is bound to namespace %s",
			strings.Join(r.p.Spec.ClusterSets, ","), r.p.Namespace))
		return out
	}

	for i, c := range r.clusters {
		member := false
		for _, m := range eligible {
			if m.matches(c.Labels) {
				member = true
				break
			}
		}
		switch {
		case !member:
			r.exclude(i, StageClusterSet, r.notMemberReason(c.Labels, other))
		case c.DeletionTimestamp != nil:
			r.exclude(i, StageDeleting, "cluster is being deleted")
		default:
			out.members = append(out.members, i)
		}
	}
	return out
}

// notMemberReason explains why a cluster is in no eligible set.
func (r *run) notMemberReason(l map[string]string, other []setMatcher) string {
	var in []string
	for _, m := range other {
		if m.matches(l) {
			in = append(in, m.name)
		}
	}
	if len(in) > 0 {
		return fmt.Sprintf("cluster is in ManagedClusterSet %s, which spec.clusterSets does not name",
			strings.Join(in, ","))
	}
	return "cluster is in no ManagedClusterSet the placement can use in namespace " + r.p.Namespace
}

// newSetMatcher returns the membership rule of a set. A set whose selector is
// invalid has no members.
func newSetMatcher(s *clusterv1beta2.ManagedClusterSet) setMatcher {
	sel := &s.Spec.ClusterSelector
	if sel.IsExclusive() {
		return setMatcher{name: s.Name, exclusive: true}
	}
	ls, err := sel.Selector(s.Name)
	if err != nil {
		return setMatcher{name: s.Name}
	}
	return setMatcher{name: s.Name, selector: ls}
}
