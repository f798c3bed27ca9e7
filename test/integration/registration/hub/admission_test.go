package hub

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testAdmission checks the shipped admission policies with a user who may
// edit ManagedClusters and bindings but holds none of the extra permissions,
// then with each permission granted.
func testAdmission(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client) {
	grant(ctx, t, admin, "alice-base", rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"},
		Resources: []string{"managedclusters", "managedclustersetbindings"},
		Verbs:     []string{"get", "list", "update", "patch", "create"},
	})
	cfg, err := hubCluster.ConfigForUser("alice")
	alice := clientFor(t, cfg, err)
	createCluster(ctx, t, admin, "cluster-adm", false, 0)
	waitCluster(ctx, t, admin, "cluster-adm", "default set label", func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultClusterSetName
	})

	// hubAcceptsClient.
	framework.Eventually(ctx, t, pollTimeout, "alice's base permissions", func(ctx context.Context) (bool, error) {
		return true, alice.Get(ctx, client.ObjectKey{Name: "cluster-adm"}, &clusterv1.ManagedCluster{})
	})
	expectDenied(t, "alice accepts without managedclusters/accept", setAccept(ctx, alice, "cluster-adm", true), "managedclusters/accept")
	grant(ctx, t, admin, "alice-accept", rbacv1.PolicyRule{
		APIGroups: []string{"register.open-cluster-management.io"}, Resources: []string{"managedclusters/accept"},
		ResourceNames: []string{"cluster-adm"}, Verbs: []string{"update"},
	})
	framework.Eventually(ctx, t, pollTimeout, "alice may accept cluster-adm", func(ctx context.Context) (bool, error) {
		return true, setAccept(ctx, alice, "cluster-adm", true)
	})

	// Cluster set label: joining prod and leaving default both need join.
	expectDenied(t, "alice moves cluster-adm to prod without join", setClusterSet(ctx, alice, "cluster-adm", "prod"), "managedclustersets/join")
	grant(ctx, t, admin, "alice-join", rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"},
		ResourceNames: []string{"prod"}, Verbs: []string{"create"},
	})
	expectDenied(t, "alice leaves default without join on default", setClusterSet(ctx, alice, "cluster-adm", "prod"), "from cluster set default")
	grant(ctx, t, admin, "alice-join-default", rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"},
		ResourceNames: []string{"default"}, Verbs: []string{"create"},
	})
	framework.Eventually(ctx, t, pollTimeout, "alice may move cluster-adm to prod", func(ctx context.Context) (bool, error) {
		return true, setClusterSet(ctx, alice, "cluster-adm", "prod")
	})

	// ManagedClusterSetBinding.
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	binding := func() *clusterv1beta2.ManagedClusterSetBinding {
		return &clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "default"},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
		}
	}
	expectDenied(t, "alice binds default without bind", alice.Create(ctx, binding()), "managedclustersets/bind")
	grant(ctx, t, admin, "alice-bind", rbacv1.PolicyRule{
		APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/bind"},
		ResourceNames: []string{"default"}, Verbs: []string{"create"},
	})
	framework.Eventually(ctx, t, pollTimeout, "alice may bind default", func(ctx context.Context) (bool, error) {
		return true, alice.Create(ctx, binding())
	})
}

// expectDenied fails t unless err is an admission denial (403 or 422)
// whose message contains hint.
func expectDenied(t *testing.T, what string, err error, hint string) {
	t.Helper()
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("%s: got %v, want an admission denial", what, err)
		return
	}
	assert.ErrorContains(t, err, hint, what)
}

// grant gives user alice the rule through a ClusterRole and binding named name.
func grant(ctx context.Context, t *testing.T, admin client.Client, name string, rule rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// setClusterSet sets the cluster set label of a ManagedCluster as c's user.
func setClusterSet(ctx context.Context, c client.Client, name, set string) error {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return err
	}
	base := mc.DeepCopy()
	mc.Labels[clusterv1beta2.ClusterSetLabel] = set
	return c.Patch(ctx, mc, client.MergeFrom(base))
}
