package accept

import (
	"context"
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// hubTurn is how long accept --wait leaves a first-join request that the
// hub approves by itself (its requester is in the ClusterManager's
// autoApproveUsers) to the hub before approving it: the cluster's record
// then says the hub's auto-approval accepted it, as the hub's policy asks,
// rather than whichever of the two looked first.
const hubTurn = 30 * time.Second

// hubApproval is what accept --wait knows of the hub's auto-approval while
// it waits for a cluster's request.
type hubApproval struct {
	// users are the requesters the ClusterManager auto-approves.
	users []string
	// seen is when accept first saw each request it left to the hub, by
	// name; accept's own clock, so that no skew between it and the hub
	// stretches the hub's turn.
	seen map[string]time.Time
}

// readHubApproval reads the ClusterManager's auto-approved requesters; none
// when the ClusterManager cannot be read (a hub installed without it, or a
// user who may not read it): accept then approves as it would without.
func readHubApproval(ctx context.Context, c client.Reader) *hubApproval {
	cm := &operatorv1.ClusterManager{}
	if err := c.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
		return &hubApproval{}
	}
	return &hubApproval{users: cm.Spec.RegistrationConfiguration.AutoApprovedIdentities(), seen: map[string]time.Time{}}
}

// leave says whether the request name of requester is still the hub's to
// approve at now, and what to tell the first time; "" after that.
func (h *hubApproval) leave(name, requester string, now time.Time) (bool, string) {
	if h == nil || !slices.Contains(h.users, requester) {
		return false, ""
	}
	first, ok := h.seen[name]
	if !ok {
		h.seen[name] = now
		return true, fmt.Sprintf("CSR %s is the hub's to approve: the ClusterManager auto-approves its requester %s (autoApproveUsers); approving it here if the hub has not within %s",
			name, requester, hubTurn)
	}
	return now.Sub(first) < hubTurn, ""
}
