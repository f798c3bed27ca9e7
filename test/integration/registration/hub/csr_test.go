package hub

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testCSRApproval checks that renewals by a cluster's own identity are
// approved and that nothing naming or requested by another identity is,
// then the auto-approve list. cluster1 and cluster2 are accepted.
func testCSRApproval(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	agent1 := agentClient(t, hubCluster, "cluster1")
	agent2 := agentClient(t, hubCluster, "cluster2")
	bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, "open-cluster-management", "agent-registration-bootstrap", time.Hour)
	boot := clientFor(t, bootCfg, err)

	renewal := createCSR(ctx, t, agent1, "cluster1", "cluster1")
	waitApproved(ctx, t, admin, renewal)

	foreignSubject := createCSR(ctx, t, agent1, "cluster1", "cluster2")
	foreignRequester := createCSR(ctx, t, agent1, "cluster2", "cluster2")
	firstJoin := createCSR(ctx, t, boot, "cluster1", "cluster1")
	bootstrapForeign := createCSR(ctx, t, boot, "cluster1", "cluster2")
	// A later good request is approved only after the controller has seen
	// the ones above.
	sentinel := createCSR(ctx, t, agent2, "cluster2", "cluster2")
	waitApproved(ctx, t, admin, sentinel)
	expectPending(ctx, t, admin, foreignSubject, "label cluster1, subject cluster2")
	expectPending(ctx, t, admin, foreignRequester, "cluster1's agent asking for cluster2's certificate")
	expectPending(ctx, t, admin, firstJoin, "bootstrap requester not in the auto-approve list")
	expectPending(ctx, t, admin, bootstrapForeign, "bootstrap requester, subject names another cluster")

	// Auto-approve list in the ClusterManager.
	setAutoApprove(ctx, t, admin, []string{bootstrapSA})
	defer setAutoApprove(ctx, t, admin, nil)
	waitApproved(ctx, t, admin, firstJoin)
	sentinel = createCSR(ctx, t, boot, "cluster2", "cluster2")
	waitApproved(ctx, t, admin, sentinel)
	expectPending(ctx, t, admin, bootstrapForeign, "auto-approved requester, subject names another cluster")
	expectPending(ctx, t, admin, foreignRequester, "cluster1's agent asking for cluster2's certificate")
}

// setAutoApprove sets the ClusterManager's autoApproveUsers.
func setAutoApprove(ctx context.Context, t *testing.T, admin client.Client, users []string) {
	t.Helper()
	cm := &operatorv1.ClusterManager{}
	if err := admin.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
		t.Fatalf("get ClusterManager: %v", err)
	}
	base := cm.DeepCopy()
	cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: users}
	if err := admin.Patch(ctx, cm, client.MergeFrom(base)); err != nil {
		t.Fatalf("set autoApproveUsers: %v", err)
	}
}
