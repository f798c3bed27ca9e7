package framework

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

// DecidedClusters returns the sorted cluster names of the decisions of
// Placement namespace/placement.
func DecidedClusters(ctx context.Context, hub client.Client, namespace, placement string) ([]string, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := hub.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return nil, err
	}
	var out []string
	for _, d := range list.Items {
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
	}
	slices.Sort(out)
	return out, nil
}
