package replicaset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

// placementDecisions is what a placementRef decided.
type placementDecisions struct {
	// found is false when the Placement does not exist.
	found bool
	// decisionObjects counts the PlacementDecisions of the Placement.
	decisionObjects int
	// groups are the decision groups in index order.
	groups []rollout.Group
}

// readDecisions reads the Placement namespace/name and its
// PlacementDecisions (labeled cluster.open-cluster-management.io/placement),
// grouped by their decision-group-index and -name labels.
func readDecisions(ctx context.Context, c client.Reader, namespace, name string) (placementDecisions, error) {
	var d placementDecisions
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &clusterv1beta1.Placement{}); err != nil {
		if apierrors.IsNotFound(err) {
			return d, nil
		}
		return d, fmt.Errorf("get Placement %s/%s: %w", namespace, name, err)
	}
	d.found = true
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return d, fmt.Errorf("list PlacementDecisions of %s/%s: %w", namespace, name, err)
	}
	d.decisionObjects = len(list.Items)
	d.groups = rollout.DecisionGroups(list.Items)
	return d, nil
}
