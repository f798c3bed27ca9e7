package placement

import (
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// orderDecisions sorts the selected clusters as spec.sortBy asks: by name
// (the default, as OCM orders decisions) or by descending score, ties by name.
func (r *run) orderDecisions(selected []int, sortBy clusterv1beta1.PlacementSortBy) {
	if sortBy == clusterv1beta1.SortByScore {
		sort.SliceStable(selected, func(a, b int) bool {
			ta, tb := r.expl[selected[a]].Total, r.expl[selected[b]].Total
			if ta != tb {
				return ta > tb
			}
			return selected[a] < selected[b]
		})
		return
	}
	// Cluster indexes follow name order.
	sort.Ints(selected)
}

// groups divides the ordered selected clusters into decision groups: each
// named group takes the remaining clusters its selector matches, then the
// rest form unnamed groups; every group is split into chunks of
// clustersPerDecisionGroup. There is always at least one group.
func (r *run) groups(selected []int, cfg *config, per groupLengthFunc) []Group {
	size := per(len(selected))
	taken := make([]bool, len(selected))
	var out []Group
	add := func(name string, members []int) {
		for start := 0; start < len(members); start += size {
			end := start + size
			if end > len(members) {
				end = len(members)
			}
			g := Group{Index: int32(len(out)), Name: name, //nolint:gosec // bounded by the cluster count
				Decisions: make([]clusterv1beta1.ClusterDecision, 0, end-start)}
			for _, i := range members[start:end] {
				g.Decisions = append(g.Decisions, clusterv1beta1.ClusterDecision{
					ClusterName: r.clusters[i].Name, Score: r.expl[i].Total})
			}
			out = append(out, g)
		}
	}
	for _, g := range cfg.groups {
		var members []int
		for k, i := range selected {
			if taken[k] {
				continue
			}
			var claims labels.Set
			if g.sel.usesClaims() {
				claims = r.claims(i)
			}
			if g.sel.matches(r.clusters[i], claims) {
				taken[k] = true
				members = append(members, i)
			}
		}
		add(g.name, members)
	}
	var rest []int
	for k, i := range selected {
		if !taken[k] {
			rest = append(rest, i)
		}
	}
	add("", rest)
	if len(out) == 0 {
		out = append(out, Group{Decisions: []clusterv1beta1.ClusterDecision{}})
	}
	return out
}

// groupLengthFunc returns the group size for a number of selected clusters.
type groupLengthFunc func(total int) int
