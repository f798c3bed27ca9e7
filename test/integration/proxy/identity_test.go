package proxy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testNamespaceEditorAttach attacks cluster1's tunnel (M6 of the security
// review) through the identities an editor of its namespace holds: eve,
// bound to the built-in edit role in namespace cluster1 on the hub,
// impersonates ServiceAccount klusterlet there (the token identity of
// earlier releases) and requests tokens of one she creates. Neither may
// attach at the hub's API server, and with the hub's RBAC loosened to let
// them, the tunnel server still refuses them: they are no agent identity.
// A user in group open-cluster-management:cluster1 (L8) may not attach
// either. cluster1's own tunnel keeps answering alice.
func testNamespaceEditorAttach(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, admin client.Client, alice kubernetes.Interface) {
	bind(ctx, t, admin, "cluster1", "edit", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eve"})
	eveCfg, err := hubCluster.ConfigForUser("eve")
	require.NoError(t, err)
	eve := kubernetes.NewForConfigOrDie(eveCfg)
	legacyUser := identity.ServiceAccountUserName("cluster1", identity.LegacyAgentServiceAccount)
	impersonating := rest.CopyConfig(eveCfg)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: legacyUser}
	// The attack's precondition: edit lets eve act as the ServiceAccount.
	framework.Eventually(ctx, t, pollTimeout, "eve impersonating "+legacyUser, func(ctx context.Context) (bool, error) {
		review, err := kubernetes.NewForConfigOrDie(impersonating).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil && review.Status.UserInfo.Username == legacyUser, nil
	})
	_, err = eve.CoreV1().ServiceAccounts("cluster1").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: identity.LegacyAgentServiceAccount}}, metav1.CreateOptions{})
	require.NoError(t, err, "eve creates ServiceAccount cluster1/klusterlet")
	tr, err := eve.CoreV1().ServiceAccounts("cluster1").CreateToken(ctx, identity.LegacyAgentServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	require.NoError(t, err, "eve requests a token of it")
	minted := &rest.Config{Host: hubCluster.Server(), BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: hubCluster.CAData()}}
	attackers := map[string]*rest.Config{"eve impersonating ServiceAccount klusterlet": impersonating, "a token eve requested": minted}

	// The hub's API server refuses them: its RBAC names no such subject.
	refusedByRBAC := func(what, user string, cfg *rest.Config) {
		t.Helper()
		status, body := attach(t, hubCluster, cfg, "cluster1")
		assert.Equal(t, http.StatusForbidden, status, "%s attaches cluster1's tunnel: %s", what, body)
		for _, part := range []string{user, "cannot get resource", "managedclusters/attach"} {
			assert.Contains(t, body, part, "%s: the hub's API server's refusal", what)
		}
	}
	for name, cfg := range attackers {
		refusedByRBAC(name, legacyUser, cfg)
	}
	oidcUser, err := hubCluster.ConfigForUser("oidc-user", "open-cluster-management:cluster1")
	require.NoError(t, err)
	refusedByRBAC("group open-cluster-management:cluster1", "oidc-user", oidcUser)

	// Even with the hub's RBAC loosened, the tunnel server refuses: the
	// ServiceAccount is not cluster1's agent identity.
	grant(ctx, t, admin, "klusterlet-attach", []string{"get"}, hubtunnel.AttachSubresource, "cluster1",
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "cluster1", Name: identity.LegacyAgentServiceAccount})
	for name, cfg := range attackers {
		framework.Eventually(ctx, t, pollTimeout, "the tunnel server refusing "+name, func(ctx context.Context) (bool, error) {
			status, body := attach(t, hubCluster, cfg, "cluster1")
			return status == http.StatusForbidden && strings.Contains(body, "is not its agent identity"), nil
		})
	}
	// cluster1 is still answered by its own agent.
	_, err = alice.CoreV1().ConfigMaps("team-b").Get(ctx, "x", metav1.GetOptions{})
	require.NoError(t, err)
}
