package hub

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
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
	// A cluster's agent reads its own requests, and nobody else's.
	framework.Eventually(ctx, t, pollTimeout, "cluster1's agent may read its own renewal request", func(ctx context.Context) (bool, error) {
		return agent1.Get(ctx, client.ObjectKey{Name: renewal}, &certificatesv1.CertificateSigningRequest{}) == nil, nil
	})
	renewal2 := createCSR(ctx, t, agent2, "cluster2", "cluster2")
	waitApproved(ctx, t, admin, renewal2)
	expectForbidden(t, "cluster1's agent reads cluster2's request", agent1.Get(ctx, client.ObjectKey{Name: renewal2}, &certificatesv1.CertificateSigningRequest{}))
	expectForbidden(t, "cluster1's agent lists requests", agent1.List(ctx, &certificatesv1.CertificateSigningRequestList{}))
	expectForbidden(t, "cluster1's agent approves cluster2's request", approveAs(ctx, hubCluster, "cluster1", renewal2))

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

	// Auto-approve list in the ClusterManager: it covers first joins only.
	// cluster1 and cluster2 were accepted before, so the bootstrap
	// identity's requests for them stay pending for an administrator; the
	// first join of cluster3, filed after them, is approved and accepts
	// cluster3, once.
	setAutoApprove(ctx, t, admin, []string{bootstrapSA})
	defer setAutoApprove(ctx, t, admin, nil)
	secondJoin := createCSR(ctx, t, boot, "cluster2", "cluster2")
	createCluster(ctx, t, admin, "cluster3", false, 0)
	defer deleteClusterAndWait(ctx, t, admin, "cluster3")
	waitApproved(ctx, t, admin, createCSR(ctx, t, boot, "cluster3", "cluster3"))
	expectPending(ctx, t, admin, firstJoin, "auto-approved requester for cluster1, accepted before")
	expectPending(ctx, t, admin, secondJoin, "auto-approved requester for cluster2, accepted before")
	expectPending(ctx, t, admin, bootstrapForeign, "auto-approved requester, subject names another cluster")
	expectPending(ctx, t, admin, foreignRequester, "cluster1's agent asking for cluster2's certificate")
	framework.Eventually(ctx, t, pollTimeout, "cluster3 accepted automatically", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "cluster3"}, mc); err != nil {
			return false, err
		}
		_, marked := mc.Annotations[clusterv1.AutomaticallyAcceptedOnAnnotationKey]
		return mc.Spec.HubAcceptsClient && marked, nil
	})
	// The approver records the automatic acceptance and the ManagedCluster
	// controller its condition, each once: two Events, neither a series (a
	// repeat within minutes is another write, and one more when its series
	// ends).
	accepted := waitCluster(ctx, t, admin, "cluster3", "accepted", (*clusterv1.ManagedCluster).IsAccepted)
	expectRecordedOnce(ctx, t, admin, accepted, "ManagedClusterAccepted", "accepted automatically", "is accepted by hub cluster admin")

	// A cluster the administrator denies afterwards stays denied: its next
	// bootstrap request is no first join and stays pending, and the hub
	// does not accept it again. A later first join of cluster4 shows the
	// hub controller has seen it.
	if err := setAccept(ctx, admin, "cluster3", false); err != nil {
		t.Fatalf("deny cluster3: %v", err)
	}
	denied := waitCluster(ctx, t, admin, "cluster3", "denied", func(mc *clusterv1.ManagedCluster) bool {
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
		return c != nil && c.Reason == clusterv1.ReasonHubClusterAdminDenied
	})
	expectRecordedOnce(ctx, t, admin, denied, "ManagedClusterDenied", "is denied by hub cluster admin")
	again := createCSR(ctx, t, boot, "cluster3", "cluster3")
	createCluster(ctx, t, admin, "cluster4", false, 0)
	defer deleteClusterAndWait(ctx, t, admin, "cluster4")
	waitApproved(ctx, t, admin, createCSR(ctx, t, boot, "cluster4", "cluster4"))
	expectPending(ctx, t, admin, again, "auto-approved requester for cluster3, denied after its automatic acceptance")
	mc := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "cluster3"}, mc); err != nil {
		t.Fatal(err)
	}
	if mc.Spec.HubAcceptsClient {
		t.Errorf("cluster3 was accepted again after the administrator denied it")
	}
}

// deleteClusterAndWait deletes a ManagedCluster and waits until it is gone.
func deleteClusterAndWait(ctx context.Context, t *testing.T, admin client.Client, name string) {
	t.Helper()
	if err := admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
		t.Fatalf("delete managed cluster %s: %v", name, err)
	}
	framework.Eventually(ctx, t, pollTimeout, "managed cluster "+name+" gone", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
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

// approveAs tries to approve the CSR name as cluster's agent identity.
func approveAs(ctx context.Context, hubCluster *framework.Cluster, cluster, name string) error {
	cfg, err := hubCluster.ConfigForUser(agentUser(cluster), "system:open-cluster-management:"+cluster, managedClustersGroup)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test",
	}}
	_, err = cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
	return err
}
