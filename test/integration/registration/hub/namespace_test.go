package hub

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testClusterNamespaces checks that the hub binds, relabels and deletes
// only the namespace it created for a cluster (pkg/clusternamespace).
//
// The attack: namespace payments holds a team's ConfigMap and RoleBinding
// (named as the hub names a cluster's) and enforces privileged Pod Security;
// a bootstrap-token holder registers a cluster named payments, which the
// hub's auto-approval accepts. The hub refuses it (NamespaceInUse, with an
// event), writes nothing into the namespace and grants the rogue agent no
// Lease there; deleting the rogue cluster leaves the namespace, its
// ConfigMap and its RoleBinding.
//
// Variations: a namespace created after the cluster but before it was
// accepted (refused, then used once an administrator adopts it, and left
// when the cluster is deleted); a namespace prepared for the cluster of its
// name (adopted by the first cluster accepted, not by a later one of the
// same name); a namespace marked for another
// ManagedCluster of the same name (refused and left); the namespace of an
// earlier cluster of the name still being deleted (waited for, then
// replaced by the new cluster's own). The hub's own namespace, marked with
// the cluster's UID and enforcing restricted, goes with its cluster
// (testDeletion).
func testClusterNamespaces(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	t.Run("a rogue cluster named after a hub namespace", func(t *testing.T) {
		const name = "payments"
		foreign := map[string]string{"team": "payments", podsecurity.EnforceLabel: "privileged"}
		expectAllowed(t, "create namespace payments", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: foreign}}))
		expectAllowed(t, "create ConfigMap payments/ledger", admin.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "ledger"}, Data: map[string]string{"balance": "100"}}))
		// The team's own binding, of the name the hub gives a cluster's.
		teamBinding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "open-cluster-management:managedcluster:payments:work"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "payments-team"}},
		}
		expectAllowed(t, "create the team's RoleBinding", admin.Create(ctx, teamBinding))
		before := &corev1.Namespace{}
		expectAllowed(t, "get namespace payments", admin.Get(ctx, client.ObjectKey{Name: name}, before))

		// The bootstrap-token holder registers payments; the hub's
		// auto-approval accepts it.
		bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, "open-cluster-management", "agent-registration-bootstrap", time.Hour)
		boot := clientFor(t, bootCfg, err)
		setAutoApprove(ctx, t, admin, []string{bootstrapSA})
		defer setAutoApprove(ctx, t, admin, nil)
		expectAllowed(t, "the bootstrap identity creates ManagedCluster payments",
			boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}))
		createCSR(ctx, t, boot, name, name)
		waitCluster(ctx, t, admin, name, "accepted by the hub's auto-approval", func(mc *clusterv1.ManagedCluster) bool { return mc.Spec.HubAcceptsClient })
		waitInUse(ctx, t, admin, name, "kubectl annotate namespace payments "+clusternamespace.AdoptedAnnotation, "delete the ManagedCluster")
		waitEvent(ctx, t, admin, name, clusterv1.ReasonNamespaceInUse, "namespace payments exists")

		expectNamespaceUntouched(ctx, t, admin, before)
		err = admin.Get(ctx, client.ObjectKey{Namespace: name, Name: "open-cluster-management:managedcluster:payments:registration"}, &rbacv1.RoleBinding{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the hub bound the rogue agent in namespace payments (err %v)", err)
		}
		rogue := agentClient(t, hubCluster, name)
		expectForbidden(t, "the rogue agent creates a Lease in payments", rogue.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: clusterv1.LeaseName}}))
		expectForbidden(t, "the rogue agent reads the team's ConfigMap", rogue.Get(ctx, client.ObjectKey{Namespace: name, Name: "ledger"}, &corev1.ConfigMap{}))
		expectAllowed(t, "the rogue agent reads its ManagedCluster and its condition", rogue.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{}))

		// The administrator deletes the unexpected cluster.
		deleteClusterAndWait(ctx, t, admin, name)
		expectNamespaceUntouched(ctx, t, admin, before)
		expectAllowed(t, "the team's ConfigMap survives", admin.Get(ctx, client.ObjectKey{Namespace: name, Name: "ledger"}, &corev1.ConfigMap{}))
		expectAllowed(t, "the team's RoleBinding survives", admin.Get(ctx, client.ObjectKeyFromObject(teamBinding), &rbacv1.RoleBinding{}))
	})

	t.Run("a namespace created before acceptance, then adopted", func(t *testing.T) {
		const name = "cluster8"
		createCluster(ctx, t, admin, name, false, 0)
		defer deleteClusterAndWait(ctx, t, admin, name)
		waitCluster(ctx, t, admin, name, "finalizer", func(mc *clusterv1.ManagedCluster) bool {
			return slices.Contains(mc.Finalizers, clusterv1.ManagedClusterFinalizer)
		})
		foreign := map[string]string{podsecurity.EnforceLabel: "baseline"}
		expectAllowed(t, "create namespace cluster8", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: foreign}}))
		expectAllowed(t, "accept cluster8", setAccept(ctx, admin, name, true))
		mc := waitInUse(ctx, t, admin, name, "namespace cluster8 exists")
		before := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster8", admin.Get(ctx, client.ObjectKey{Name: name}, before))
		expectNamespaceUntouched(ctx, t, admin, before)

		// The fix the condition names: adopt the namespace for the cluster.
		expectAllowed(t, "adopt namespace cluster8", admin.Patch(ctx, before.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"`+clusternamespace.AdoptedAnnotation+`":"`+string(mc.UID)+`"}}}`))))
		waitCluster(ctx, t, admin, name, "accepted once adopted", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		expectAllowed(t, "the registration RoleBinding in the adopted namespace", admin.Get(ctx,
			client.ObjectKey{Namespace: name, Name: "open-cluster-management:managedcluster:cluster8:registration"}, &rbacv1.RoleBinding{}))
		adopted := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster8", admin.Get(ctx, client.ObjectKey{Name: name}, adopted))
		if !maps.Equal(podsecurity.LabelsOf(adopted.Labels), foreign) {
			t.Errorf("the hub changed the Pod Security labels of the adopted namespace: %v, want %v", adopted.Labels, foreign)
		}

		deleteClusterAndWait(ctx, t, admin, name)
		expectAllowed(t, "get namespace cluster8", admin.Get(ctx, client.ObjectKey{Name: name}, adopted))
		if !adopted.DeletionTimestamp.IsZero() {
			t.Error("the hub deleted the adopted namespace cluster8")
		}
		err := admin.Get(ctx, client.ObjectKey{Namespace: name, Name: "open-cluster-management:managedcluster:cluster8:registration"}, &rbacv1.RoleBinding{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the cluster's RoleBinding outlives it in the adopted namespace (err %v)", err)
		}
	})

	t.Run("a namespace prepared for the cluster of its name", func(t *testing.T) {
		// As a standby hub's, holding works before the cluster registers.
		const name = "cluster11"
		expectAllowed(t, "create namespace cluster11", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{clusternamespace.PreparedAnnotation: name}}}))
		createCluster(ctx, t, admin, name, true, 0)
		mc := waitCluster(ctx, t, admin, name, "accepted", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		ns := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster11", admin.Get(ctx, client.ObjectKey{Name: name}, ns))
		if ns.Annotations[clusternamespace.AdoptedAnnotation] != string(mc.UID) || ns.Annotations[clusternamespace.PreparedAnnotation] != "" {
			t.Errorf("namespace cluster11 has annotations %v, want it adopted for UID %s", ns.Annotations, mc.UID)
		}
		if got := podsecurity.LabelsOf(ns.Labels); len(got) > 0 {
			t.Errorf("the hub set Pod Security labels %v on the prepared namespace", got)
		}
		deleteClusterAndWait(ctx, t, admin, name)
		before := ns.DeepCopy()
		expectAllowed(t, "get namespace cluster11", admin.Get(ctx, client.ObjectKey{Name: name}, before))
		expectNamespaceUntouched(ctx, t, admin, before)
		// A cluster of the same name registered again does not take it.
		createCluster(ctx, t, admin, name, true, 0)
		defer deleteClusterAndWait(ctx, t, admin, name)
		waitInUse(ctx, t, admin, name, "adopted for another ManagedCluster cluster11 (UID "+string(mc.UID))
	})

	t.Run("a namespace marked for another cluster of the name", func(t *testing.T) {
		const name = "cluster9"
		expectAllowed(t, "create namespace cluster9", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{clusternamespace.OwnerAnnotation: "4f1c2a9e-0000-0000-0000-000000000000"}}}))
		before := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster9", admin.Get(ctx, client.ObjectKey{Name: name}, before))
		createCluster(ctx, t, admin, name, true, 0)
		waitInUse(ctx, t, admin, name, "earlier ManagedCluster cluster9 (UID 4f1c2a9e-0000-0000-0000-000000000000")
		expectNamespaceUntouched(ctx, t, admin, before)
		deleteClusterAndWait(ctx, t, admin, name)
		expectNamespaceUntouched(ctx, t, admin, before)
	})

	t.Run("the namespace of an earlier cluster of the name is waited for", func(t *testing.T) {
		const name = "cluster10"
		expectAllowed(t, "create namespace cluster10", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{clusternamespace.OwnerAnnotation: "earlier"}}}))
		// Its content holds its deletion until released.
		held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "held", Finalizers: []string{"test.kubectl-ocm.io/hold"}}}
		expectAllowed(t, "create ConfigMap cluster10/held", admin.Create(ctx, held))
		expectAllowed(t, "delete namespace cluster10", admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
		createCluster(ctx, t, admin, name, true, 0)
		defer deleteClusterAndWait(ctx, t, admin, name)
		waitInUse(ctx, t, admin, name, "being deleted")

		expectAllowed(t, "release ConfigMap cluster10/held", admin.Patch(ctx, held, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
		mc := waitCluster(ctx, t, admin, name, "accepted once the earlier namespace is gone", hasCondition(
			clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
		ns := &corev1.Namespace{}
		expectAllowed(t, "get namespace cluster10", admin.Get(ctx, client.ObjectKey{Name: name}, ns))
		if ns.Annotations[clusternamespace.OwnerAnnotation] != string(mc.UID) || !podsecurity.EnforcesRestricted(ns.Labels) {
			t.Errorf("namespace cluster10 is not the new cluster's own: labels %v, annotations %v", ns.Labels, ns.Annotations)
		}
	})
}

// waitInUse waits until cluster's HubAcceptedManagedCluster is False with
// reason NamespaceInUse and a message that says each of says.
func waitInUse(ctx context.Context, t *testing.T, admin client.Client, cluster string, says ...string) *clusterv1.ManagedCluster {
	t.Helper()
	return waitCluster(ctx, t, admin, cluster, "NamespaceInUse saying "+strings.Join(says, ", "), func(mc *clusterv1.ManagedCluster) bool {
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == clusterv1.ReasonNamespaceInUse && containsAll(c.Message, says...)
	})
}

// expectNamespaceUntouched fails t unless the namespace before still exists,
// not being deleted, with the labels and annotations it had.
func expectNamespaceUntouched(ctx context.Context, t *testing.T, admin client.Client, before *corev1.Namespace) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(before), ns); err != nil {
		t.Fatalf("namespace %s: %v", before.Name, err)
	}
	if !ns.DeletionTimestamp.IsZero() {
		t.Errorf("namespace %s is being deleted", ns.Name)
	}
	if !maps.Equal(ns.Labels, before.Labels) || !maps.Equal(ns.Annotations, before.Annotations) {
		t.Errorf("namespace %s changed: labels %v, annotations %v; want %v, %v", ns.Name, ns.Labels, ns.Annotations, before.Labels, before.Annotations)
	}
}
