package rollout

import (
	"sort"
	"strconv"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// DecisionGroups groups the clusters of a placement's PlacementDecisions by
// their decision-group-index label (a missing or malformed index counts as
// 0), named by their decision-group-name label, in index order with each
// group's clusters sorted by name.
func DecisionGroups(decisions []clusterv1beta1.PlacementDecision) []Group {
	byIndex := map[int32]*Group{}
	for i := range decisions {
		pd := &decisions[i]
		index := int32(0)
		if v, err := strconv.ParseInt(pd.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32); err == nil {
			index = int32(v)
		}
		g := byIndex[index]
		if g == nil {
			g = &Group{Index: index}
			byIndex[index] = g
		}
		if n := pd.Labels[clusterv1beta1.DecisionGroupNameLabel]; n != "" {
			g.Name = n
		}
		for _, cd := range pd.Status.Decisions {
			if cd.ClusterName != "" {
				g.Clusters = append(g.Clusters, cd.ClusterName)
			}
		}
	}
	groups := make([]Group, 0, len(byIndex))
	for _, g := range byIndex {
		sort.Strings(g.Clusters)
		groups = append(groups, *g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Index < groups[j].Index })
	return groups
}

// Claim keeps, of groups, the clusters not in seen and adds them to seen: a
// cluster decided by several placements of one ManifestWorkReplicaSet
// belongs to the first. It returns the groups with the kept clusters (empty
// groups included) and the kept clusters.
func Claim(groups []Group, seen map[string]bool) (kept []Group, owned []string) {
	for _, g := range groups {
		k := Group{Index: g.Index, Name: g.Name}
		for _, c := range g.Clusters {
			if !seen[c] {
				seen[c] = true
				k.Clusters = append(k.Clusters, c)
				owned = append(owned, c)
			}
		}
		kept = append(kept, k)
	}
	return kept, owned
}
