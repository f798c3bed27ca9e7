package hub

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestHubRegistration runs the hub controller as its ServiceAccount on a
// real hub and checks accept, deny, isolation between clusters, CSR
// approval, admission, lease health, cluster sets, deletion and restarts.
func TestHubRegistration(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env := hubtest.Start(t, 10*time.Minute)
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	stop := startController(t, hubCluster, hub.Options{})
	// restart replaces the controller by a new one that lives as long as t.
	restart := func() {
		stop()
		stop = startController(t, hubCluster, hub.Options{})
	}

	createCluster(ctx, t, admin, "cluster1", false, 0)
	createCluster(ctx, t, admin, "cluster2", true, 0)

	t.Run("not accepted: read-only access, default set", func(t *testing.T) {
		mc := waitCluster(ctx, t, admin, "cluster1", "finalizer, default set label and read-only role", func(mc *clusterv1.ManagedCluster) bool {
			return slices.Contains(mc.Finalizers, clusterv1.ManagedClusterFinalizer) &&
				mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultClusterSetName &&
				mc.Spec.FindTaint(clusterv1.ManagedClusterTaintUnreachable) != nil
		})
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted); c != nil {
			t.Errorf("never accepted cluster has condition %v", c)
		}
		agent := agentClient(t, hubCluster, "cluster1")
		framework.Eventually(ctx, t, pollTimeout, "cluster1's agent can read its ManagedCluster", func(ctx context.Context) (bool, error) {
			return true, agent.Get(ctx, client.ObjectKey{Name: "cluster1"}, &clusterv1.ManagedCluster{})
		})
		got := &clusterv1.ManagedCluster{}
		_ = agent.Get(ctx, client.ObjectKey{Name: "cluster1"}, got)
		got.Labels["x"] = "y"
		expectForbidden(t, "not accepted agent updates its ManagedCluster", agent.Update(ctx, got))
	})

	t.Run("accept creates namespace, RBAC and condition", func(t *testing.T) {
		expectAllowed(t, "admin accepts cluster1", setAccept(ctx, admin, "cluster1", true))
		waitCluster(ctx, t, admin, "cluster1", "HubAccepted True", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		waitCluster(ctx, t, admin, "cluster2", "HubAccepted True", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		ns := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster1", admin.Get(ctx, client.ObjectKey{Name: "cluster1"}, ns))
		if ns.Labels[clusterv1.ClusterNameLabelKey] != "cluster1" {
			t.Errorf("namespace labels %v lack the cluster name", ns.Labels)
		}
		for _, rb := range []client.ObjectKey{
			{Namespace: "cluster1", Name: "open-cluster-management:managedcluster:cluster1:registration"},
			{Namespace: "cluster1", Name: "open-cluster-management:managedcluster:cluster1:work"},
			{Namespace: "kube-public", Name: "open-cluster-management:managedcluster:cluster1:hub-ca-bundle"},
		} {
			expectAllowed(t, "get RoleBinding "+rb.String(), admin.Get(ctx, rb, &rbacv1.RoleBinding{}))
		}
		// Its cluster-scoped rights come from the agents' shared binding:
		// a binding per cluster would cost every request to the hub. The
		// per-cluster one exists only while the agent has certificate
		// requests of its own to read, and cluster1's has none.
		err := admin.Get(ctx, client.ObjectKey{Name: "open-cluster-management:managedcluster:cluster1"}, &rbacv1.ClusterRoleBinding{})
		assert.True(t, apierrors.IsNotFound(err), "cluster1's own ClusterRoleBinding: got %v, want none", err)
		framework.Eventually(ctx, t, pollTimeout, "lease cluster1/managed-cluster-lease", func(ctx context.Context) (bool, error) {
			return true, admin.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
		})
	})

	t.Run("one cluster's identity cannot touch another's", func(t *testing.T) {
		agent1 := agentClient(t, hubCluster, "cluster1")
		framework.Eventually(ctx, t, pollTimeout, "cluster1's agent may read its lease", func(ctx context.Context) (bool, error) {
			return true, agent1.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
		})
		framework.Eventually(ctx, t, pollTimeout, "lease cluster2/managed-cluster-lease", func(ctx context.Context) (bool, error) {
			return true, admin.Get(ctx, client.ObjectKey{Namespace: "cluster2", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
		})
		// Every agent may read every ManagedCluster (docs/design/authorization.md)
		// and write none but its own's status (admission; "an agent
		// changes no work's spec ..." tries each subject form).
		expectAllowed(t, "cluster1 reads cluster2's ManagedCluster", agent1.Get(ctx, client.ObjectKey{Name: "cluster2"}, &clusterv1.ManagedCluster{}))
		expectDenied(t, "cluster1 writes cluster2's status", agent1.Status().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster2"}},
			client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`)), client.DryRunAll),
			"may not write the status of ManagedCluster cluster2")
		expectForbidden(t, "cluster1 reads cluster2's lease", agent1.Get(ctx, client.ObjectKey{Namespace: "cluster2", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
		expectForbidden(t, "cluster1 lists leases in cluster2", agent1.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace("cluster2")))
		expectForbidden(t, "cluster1 reads namespace cluster2", agent1.Get(ctx, client.ObjectKey{Name: "cluster2"}, &corev1.Namespace{}))
		expectAllowed(t, "cluster1 lists ManagedClusters", agent1.List(ctx, &clusterv1.ManagedClusterList{}))
		expectForbidden(t, "cluster1 creates a ConfigMap in cluster2", agent1.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: "x"}}))
		// The hub's CA bundle: the agent follows kube-public's, which only
		// the hub's administrators write, and may not read the copy in its
		// own namespace, which the namespace's editors may write.
		framework.Eventually(ctx, t, pollTimeout, "cluster1's agent may read kube-public/kube-root-ca.crt", func(ctx context.Context) (bool, error) {
			return true, agent1.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
		})
		expectForbidden(t, "cluster1 reads cluster1/kube-root-ca.crt", agent1.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "kube-root-ca.crt"}, &corev1.ConfigMap{}))
		expectForbidden(t, "cluster1 lists ConfigMaps in cluster1", agent1.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("cluster1")))
		expectForbidden(t, "cluster1 writes kube-public/kube-root-ca.crt", agent1.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "kube-root-ca.crt"}}))
		expectForbidden(t, "cluster1 accepts itself via managedclusters/accept", setAccept(ctx, agent1, "cluster2", false))
	})

	t.Run("the per-cluster bindings of an earlier release are removed", func(t *testing.T) { testEarlierBindings(ctx, t, admin) })
	t.Run("an agent changes no work's spec and nothing of its ManagedCluster but status", func(t *testing.T) { testAgentWrites(ctx, t, hubCluster, admin) })
	t.Run("registrants set no hub annotation", func(t *testing.T) { testRegistrantAnnotations(ctx, t, hubCluster, admin) })
	t.Run("the hub controller grants nothing beyond what it makes", func(t *testing.T) { testHubControllerWrites(ctx, t, hubCluster) })
	t.Run("template authors grant only what they may bind", func(t *testing.T) { testTemplatePermissions(ctx, t, hubCluster, admin) })
	t.Run("CSR approval", func(t *testing.T) { testCSRApproval(ctx, t, hubCluster, admin) })
	t.Run("the hub uses only the namespace it created", func(t *testing.T) { testClusterNamespaces(ctx, t, hubCluster, admin) })
	t.Run("accept --wait sees the hub's auto-approval", func(t *testing.T) {
		testAcceptWaitsForAutoApproval(ctx, t, hubCluster, admin, env.Kubeconfig())
	})
	t.Run("admission", func(t *testing.T) { testAdmission(ctx, t, hubCluster, admin) })
	t.Run("lease health and taints", func(t *testing.T) { testLeaseHealth(ctx, t, hubCluster, admin) })
	t.Run("cluster sets", func(t *testing.T) { testClusterSets(ctx, t, admin) })

	t.Run("deny revokes", func(t *testing.T) {
		expectAllowed(t, "admin denies cluster1", setAccept(ctx, admin, "cluster1", false))
		waitCluster(ctx, t, admin, "cluster1", "HubAccepted False Denied", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionFalse, clusterv1.ReasonHubClusterAdminDenied))
		framework.Eventually(ctx, t, pollTimeout, "cluster1's RoleBindings gone", func(ctx context.Context) (bool, error) {
			err := admin.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "open-cluster-management:managedcluster:cluster1:registration"}, &rbacv1.RoleBinding{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
			err = admin.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: "open-cluster-management:managedcluster:cluster1:hub-ca-bundle"}, &rbacv1.RoleBinding{})
			return apierrors.IsNotFound(err), nil
		})
		agent1 := agentClient(t, hubCluster, "cluster1")
		expectForbidden(t, "denied agent reads its lease", agent1.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
		expectAllowed(t, "denied agent reads its ManagedCluster", agent1.Get(ctx, client.ObjectKey{Name: "cluster1"}, &clusterv1.ManagedCluster{}))
		expectDenied(t, "denied agent writes its status", agent1.Status().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}},
			client.RawPatch(types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`)), client.DryRunAll),
			"the hub does not accept cluster cluster1")
	})

	t.Run("restart loses nothing", func(t *testing.T) {
		restart()
		createCluster(ctx, t, admin, "cluster5", true, 0)
		waitCluster(ctx, t, admin, "cluster5", "accepted after restart", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		mc := waitCluster(ctx, t, admin, "cluster2", "still accepted", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		if !slices.Contains(mc.Finalizers, clusterv1.ManagedClusterFinalizer) {
			t.Errorf("cluster2 lost its finalizer: %v", mc.Finalizers)
		}
		expectAllowed(t, "cluster2's RoleBinding survives", admin.Get(ctx, client.ObjectKey{Namespace: "cluster2", Name: "open-cluster-management:managedcluster:cluster2:work"}, &rbacv1.RoleBinding{}))
	})

	t.Run("deletion cleans up in order", func(t *testing.T) { testDeletion(ctx, t, admin) })
}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// testEarlierBindings: an earlier release bound each accepted cluster's own
// ClusterRole with a ClusterRoleBinding of the cluster's name, labeled with
// it. The hub deletes both when the cluster has no certificate requests of
// its own to read (docs/design/authorization.md), and leaves an object of
// that name it did not make.
func testEarlierBindings(ctx context.Context, t *testing.T, admin client.Client) {
	name := "open-cluster-management:managedcluster:cluster2"
	labels := map[string]string{clusterv1.ClusterNameLabelKey: "cluster2"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, ResourceNames: []string{"cluster2"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: identity.AgentSubjects("cluster2", false)}
	expectAllowed(t, "create cluster2's ClusterRole of an earlier release", admin.Create(ctx, role))
	expectAllowed(t, "create cluster2's ClusterRoleBinding of an earlier release", admin.Create(ctx, binding))
	framework.Eventually(ctx, t, pollTimeout, "cluster2's ClusterRoleBinding and ClusterRole of an earlier release gone", func(ctx context.Context) (bool, error) {
		errBinding := admin.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRoleBinding{})
		errRole := admin.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{})
		return apierrors.IsNotFound(errBinding) && apierrors.IsNotFound(errRole), nil
	})

	other := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:managedcluster:cluster1"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "someone"}}}
	expectAllowed(t, "create someone else's ClusterRoleBinding of cluster1's name", admin.Create(ctx, other))
	t.Cleanup(func() { _ = admin.Delete(context.WithoutCancel(ctx), other) })
	// A change of cluster1 has the hub reconcile it.
	expectAllowed(t, "annotate cluster1", admin.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/reconcile":"now"}}}`))))
	framework.Consistently(ctx, t, 3*time.Second, "someone else's ClusterRoleBinding of cluster1's name stays", func(ctx context.Context) (bool, error) {
		return true, admin.Get(ctx, client.ObjectKeyFromObject(other), &rbacv1.ClusterRoleBinding{})
	})
}
