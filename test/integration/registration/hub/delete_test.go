package hub

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testDeletion deletes an accepted, available cluster4 holding two
// ManifestWorks (one with cleanup priority 10) and checks the order: works
// without priority first, then the prioritized one, then RBAC, CSRs and the
// namespace, reported in the Deleting condition, then the ManagedCluster.
func testDeletion(ctx context.Context, t *testing.T, admin client.Client) {
	createCluster(ctx, t, admin, "cluster4", true, 0)
	mc := waitCluster(ctx, t, admin, "cluster4", "accepted", hasCondition(
		clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
	// Report the cluster available, so that the hub leaves the works'
	// finalizers to the (simulated) agent.
	base := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedClusterAvailable, Message: "available",
	})
	if err := admin.Status().Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatalf("report cluster4 available: %v", err)
	}
	// The hub created the namespace: marked with the cluster's UID, it
	// enforces restricted Pod Security and names the hub as its setter.
	own := &corev1.Namespace{}
	expectAllowed(t, "get namespace cluster4", admin.Get(ctx, client.ObjectKey{Name: "cluster4"}, own))
	if own.Annotations[clusternamespace.OwnerAnnotation] != string(mc.UID) || !podsecurity.EnforcesRestricted(own.Labels) ||
		own.Annotations[podsecurity.SetByAnnotation] != podsecurity.SetByHub {
		t.Errorf("namespace cluster4, which the hub created, has labels %v and annotations %v", own.Labels, own.Annotations)
	}
	createWork(ctx, t, admin, "first", "")
	createWork(ctx, t, admin, "later", "10")
	if err := admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster4", Name: "left-over"}}); err != nil {
		t.Fatal(err)
	}
	csrName := createCSR(ctx, t, admin, "cluster4", "cluster4")

	if err := admin.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster4"}}); err != nil {
		t.Fatalf("delete cluster4: %v", err)
	}
	waitCluster(ctx, t, admin, "cluster4", "Deleting names the works", func(mc *clusterv1.ManagedCluster) bool {
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionDeleting)
		return c != nil && c.Reason == clusterv1.ConditionDeletingReasonResourceRemaining && containsAll(c.Message, "ManifestWorks", "first", "later")
	})
	waitWorkDeleting(ctx, t, admin, "first")
	later := &workv1.ManifestWork{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "cluster4", Name: "later"}, later); err != nil {
		t.Fatal(err)
	}
	if !later.DeletionTimestamp.IsZero() {
		t.Errorf("work with cleanup priority 10 deleted while a work without priority remains")
	}
	releaseWork(ctx, t, admin, "first")
	waitWorkDeleting(ctx, t, admin, "later")
	releaseWork(ctx, t, admin, "later")

	framework.Eventually(ctx, t, pollTimeout, "cluster4 gone", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Name: "cluster4"}, &clusterv1.ManagedCluster{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	gone := map[string]error{
		"namespace":                 admin.Get(ctx, client.ObjectKey{Name: "cluster4"}, &corev1.Namespace{}),
		"ClusterRole":               admin.Get(ctx, client.ObjectKey{Name: "open-cluster-management:managedcluster:cluster4"}, &rbacv1.ClusterRole{}),
		"ClusterRoleBinding":        admin.Get(ctx, client.ObjectKey{Name: "open-cluster-management:managedcluster:cluster4"}, &rbacv1.ClusterRoleBinding{}),
		"hub CA bundle RoleBinding": admin.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: "open-cluster-management:managedcluster:cluster4:hub-ca-bundle"}, &rbacv1.RoleBinding{}),
		"CSR":                       admin.Get(ctx, client.ObjectKey{Name: csrName}, &certificatesv1.CertificateSigningRequest{}),
	}
	for what, err := range gone {
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s of cluster4 still there after the cluster is gone: %v", what, err)
		}
	}
}

// createWork creates a ManifestWork in cluster4 with a finalizer, as the
// work agent would add, and an optional cleanup priority.
func createWork(ctx context.Context, t *testing.T, admin client.Client, name, priority string) {
	t.Helper()
	w := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster4", Name: name, Finalizers: []string{"test.open-cluster-management.io/agent"}},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{
			RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"}}`)},
		}}}},
	}
	if priority != "" {
		w.Annotations = map[string]string{clusterv1.CleanupPriorityAnnotationKey: priority}
	}
	if err := admin.Create(ctx, w); err != nil {
		t.Fatalf("create ManifestWork %s: %v", name, err)
	}
}

// waitWorkDeleting waits until the hub has deleted the work name.
func waitWorkDeleting(ctx context.Context, t *testing.T, admin client.Client, name string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "ManifestWork "+name+" deleted by the hub", func(ctx context.Context) (bool, error) {
		w := &workv1.ManifestWork{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "cluster4", Name: name}, w); err != nil {
			return false, err
		}
		return !w.DeletionTimestamp.IsZero(), nil
	})
}

// releaseWork removes the work's finalizer, as the agent does when done.
func releaseWork(ctx context.Context, t *testing.T, admin client.Client, name string) {
	t.Helper()
	w := &workv1.ManifestWork{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "cluster4", Name: name}, w); err != nil {
		t.Fatal(err)
	}
	base := w.DeepCopy()
	w.Finalizers = nil
	if err := admin.Patch(ctx, w, client.MergeFrom(base)); err != nil {
		t.Fatalf("release ManifestWork %s: %v", name, err)
	}
}
