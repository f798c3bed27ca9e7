package hub

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestAgentTokenDriver checks the hub's half of the token registration
// driver on a hub whose controller manager signs no client certificates: a
// token request answers only once the request is approved and its cluster
// accepted; the sealed token opens with the request's key only; the token
// identity holds what a certificate identity holds and nothing of another
// cluster; it refreshes itself through the TokenRequest API; and denying
// the cluster revokes it.
func TestAgentTokenDriver(t *testing.T) {
	t.Parallel() // an environment of its own
	fx := startAgentToken(t)
	t.Run("no token before approval and acceptance", fx.noTokenYet)
	t.Run("approved and accepted: a sealed token only the request's key opens", fx.sealedToken)
	if fx.token == nil {
		return
	}
	fx.agent = clientFor(t, tokenConfig(fx.hub, fx.token), nil)
	t.Run("the token identity holds the agent's rights and no other cluster's", fx.agentRights)
	t.Run("the agent refreshes its token, and only its own", fx.refresh)
	t.Run("only a token-driver cluster's bindings name its token identity", fx.bindings)
	t.Run("an editor of the cluster namespace is not its token identity", fx.editor)
	t.Run("the hub deletes the token identity an earlier release made in the cluster namespace", fx.legacyIdentity)
	t.Run("a request whose subject names another cluster fails", fx.forgedSubject)
	t.Run("denying the cluster revokes its tokens", fx.denyRevokes)
}

// agentTokenFixture is what the steps of TestAgentTokenDriver share: a hub
// that signs no client certificates, its bootstrap identity, and the token
// requests of cluster1 (with its key) and cluster2, which registered with
// it.
type agentTokenFixture struct {
	ctx        context.Context
	hub        *framework.Cluster
	admin      client.Client
	boot       client.Client
	key1       *ecdsa.PrivateKey
	csr1, csr2 string
	// token is cluster1's token once sealedToken opened it, and agent a
	// client of it.
	token []byte
	agent client.Client
}

// startAgentToken starts the hub and its registration controller, and has
// cluster1 and cluster2 register and request a token with the bootstrap
// identity.
func startAgentToken(t *testing.T) *agentTokenFixture {
	ctx, env := hubtest.StartWith(t, 5*time.Minute, framework.Options{NoClientSigning: []string{"hub"}})
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	startController(t, hubCluster, hub.Options{})
	bootCfg, err := hubCluster.ConfigForServiceAccount(ctx, identity.BootstrapNamespace, identity.BootstrapServiceAccount, time.Hour)
	boot := clientFor(t, bootCfg, err)

	// Two clusters register with the bootstrap identity; cluster2 stays
	// unaccepted.
	for _, name := range []string{"cluster1", "cluster2"} {
		expectAllowed(t, "bootstrap creates ManagedCluster "+name, boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	}
	key1, csr1 := createTokenCSR(ctx, t, boot, "cluster1", "cluster1")
	_, csr2 := createTokenCSR(ctx, t, boot, "cluster2", "cluster2")
	return &agentTokenFixture{ctx: ctx, hub: hubCluster, admin: admin, boot: boot, key1: key1, csr1: csr1, csr2: csr2}
}

// noTokenYet checks that the hub issues no token before the request is
// approved and its cluster accepted.
func (fx *agentTokenFixture) noTokenYet(t *testing.T) {
	ctx, admin, csr1, csr2 := fx.ctx, fx.admin, fx.csr1, fx.csr2
	expectAllowed(t, "approve cluster2's request", approveAsAdmin(ctx, admin, csr2))
	expectAllowed(t, "accept cluster1", setAccept(ctx, admin, "cluster1", true))
	waitCluster(ctx, t, admin, "cluster1", "accepted", hasCondition(clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
	// cluster1 accepted but its request pending, cluster2's request
	// approved but the cluster not accepted: the hub issues neither.
	framework.Consistently(ctx, t, 3*time.Second, "both requests stay unanswered", func(ctx context.Context) (bool, error) {
		for _, name := range []string{csr1, csr2} {
			if st := tokenState(ctx, t, admin, name); st.Phase != certs.RequestPending {
				return false, fmt.Errorf("request %s is %v before its approval and its cluster's acceptance", name, st.Phase)
			}
		}
		return true, nil
	})
	if err := admin.Get(ctx, tokenIdentity("cluster1"), &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount %s exists before any token was issued (err %v)", tokenIdentity("cluster1"), err)
	}
}

// sealedToken checks that, approved and accepted, the request gets a sealed
// token that only the request's key opens, and keeps it in fx.token.
func (fx *agentTokenFixture) sealedToken(t *testing.T) {
	ctx, admin, csr1, key1 := fx.ctx, fx.admin, fx.csr1, fx.key1
	expectAllowed(t, "approve cluster1's request", approveAsAdmin(ctx, admin, csr1))
	var st certs.RequestState
	framework.Eventually(ctx, t, pollTimeout, "cluster1's token issued", func(ctx context.Context) (bool, error) {
		st = tokenState(ctx, t, admin, csr1)
		return st.Phase == certs.RequestIssued, nil
	})
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := certs.OpenToken(st.SealedToken, st.Name, st.UID, other); err == nil {
		t.Error("another key opened the sealed token")
	}
	if fx.token, err = certs.OpenToken(st.SealedToken, st.Name, st.UID, key1); err != nil {
		t.Fatal(err)
	}
	claims, err := kubeconfig.ParseServiceAccountToken(fx.token)
	if err != nil {
		t.Fatal(err)
	}
	if (client.ObjectKey{Namespace: claims.Namespace, Name: claims.Name}) != tokenIdentity("cluster1") {
		t.Errorf("the token is of ServiceAccount %s/%s, want %s", claims.Namespace, claims.Name, tokenIdentity("cluster1"))
	}
	if life := claims.Expiry.Sub(claims.IssuedAt); life != certs.DefaultAgentTokenLifetime {
		t.Errorf("the token lives %s, want %s", life, certs.DefaultAgentTokenLifetime)
	}
}

// agentRights checks that the token identity holds the agent's rights and no
// other cluster's.
func (fx *agentTokenFixture) agentRights(t *testing.T) {
	ctx, admin, agent := fx.ctx, fx.admin, fx.agent
	framework.Eventually(ctx, t, pollTimeout, "the token identity reads its lease", func(ctx context.Context) (bool, error) {
		return true, agent.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
	})
	mc := &clusterv1.ManagedCluster{}
	expectAllowed(t, "the token identity reads its ManagedCluster", agent.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc))
	expectAllowed(t, "the token identity patches its ManagedCluster's status", agent.Status().Patch(ctx, mc, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"version":{"kubernetes":"v1.37.0"}}}`))))
	createCluster(ctx, t, admin, "cluster3", true, 0)
	framework.Eventually(ctx, t, pollTimeout, "lease cluster3/managed-cluster-lease", func(ctx context.Context) (bool, error) {
		return true, admin.Get(ctx, client.ObjectKey{Namespace: "cluster3", Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
	})
	// Every agent reads every ManagedCluster (docs/design/authorization.md)
	// and writes the status of its own only.
	expectAllowed(t, "cluster1's token reads cluster3's ManagedCluster", agent.Get(ctx, client.ObjectKey{Name: "cluster3"}, &clusterv1.ManagedCluster{}))
	expectDenied(t, "cluster1's token writes cluster3's status", agent.Status().Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster3"}},
		client.RawPatch("application/merge-patch+json", []byte(`{"status":{"version":{"kubernetes":"v1.37.0"}}}`)), client.DryRunAll),
		"may not write the status of ManagedCluster cluster3")
	expectForbidden(t, "cluster1's token reads cluster3's lease", agent.Get(ctx, client.ObjectKey{Namespace: "cluster3", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
	expectForbidden(t, "cluster1's token lists leases in cluster3", agent.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace("cluster3")))
	expectAllowed(t, "cluster1's token lists ManagedClusters", agent.List(ctx, &clusterv1.ManagedClusterList{}))
	expectForbidden(t, "cluster1's token creates a ConfigMap in cluster3", agent.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster3", Name: "x"}}))
	expectForbidden(t, "cluster1's token reads Secrets of its own namespace", agent.List(ctx, &corev1.SecretList{}, client.InNamespace("cluster1")))
	expectForbidden(t, "cluster1's token accepts cluster2", setAccept(ctx, agent, "cluster2", true))
	// Admission holds the token identity to what it holds an agent's
	// certificate to: a work's finalizers only.
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "token-writes"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: rawObject(t, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}})}}}}}}
	expectAllowed(t, "admin creates a work in cluster1", admin.Create(ctx, work))
	expectAllowed(t, "the token identity reads the work", agent.Get(ctx, client.ObjectKeyFromObject(work), work))
	work.Labels = map[string]string{"owner": "agent"}
	expectDenied(t, "the token identity labels the work", agent.Update(ctx, work), "may change only the finalizers of ManifestWork token-writes")
	expectAllowed(t, "the token identity reads its ManagedCluster", agent.Get(ctx, client.ObjectKeyFromObject(mc), mc))
	mc.Spec.LeaseDurationSeconds = 3600
	expectForbidden(t, "the token identity sets its lease duration", agent.Update(ctx, mc))
}

// refresh checks that the agent refreshes its token, and only its own.
func (fx *agentTokenFixture) refresh(t *testing.T) {
	ctx, hubCluster, agent := fx.ctx, fx.hub, fx.agent
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	own := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.AgentTokenNamespace, Name: "cluster1"}}
	expectAllowed(t, "the token identity requests a token of itself", agent.SubResource("token").Create(ctx, own, tr))
	refreshed := clientFor(t, tokenConfig(hubCluster, []byte(tr.Status.Token)), nil)
	expectAllowed(t, "the refreshed token reads the lease", refreshed.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
	for _, sa := range []client.ObjectKey{
		{Namespace: identity.BootstrapNamespace, Name: identity.BootstrapServiceAccount},
		tokenIdentity("cluster3"),
		{Namespace: identity.AgentTokenNamespace, Name: "default"},
		{Namespace: "cluster1", Name: "default"},
		{Namespace: "cluster1", Name: identity.LegacyAgentServiceAccount},
	} {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
		expectForbidden(t, "the token identity requests a token of "+sa.String(),
			agent.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name}}, tr))
	}
}

// bindings checks that only a token-driver cluster's bindings name its token
// identity.
func (fx *agentTokenFixture) bindings(t *testing.T) {
	ctx, admin := fx.ctx, fx.admin
	group := func(cluster string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.ClusterGroup(cluster)}
	}
	expectSubjects(ctx, t, admin, "cluster1", []rbacv1.Subject{group("cluster1"), identity.AgentTokenSubject("cluster1")})
	expectSubjects(ctx, t, admin, "cluster3", []rbacv1.Subject{group("cluster3")})
}

// editor checks that an editor of the cluster namespace is not its token
// identity.
func (fx *agentTokenFixture) editor(t *testing.T) {
	ctx, admin, hubCluster := fx.ctx, fx.admin, fx.hub
	expectAllowed(t, "bind eve to edit in cluster1", admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "eve-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "eve"}},
	}))
	eveCfg, err := hubCluster.ConfigForUser("eve")
	eve := clientFor(t, eveCfg, err)
	framework.Eventually(ctx, t, pollTimeout, "eve edits cluster1", func(ctx context.Context) (bool, error) {
		err := eve.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "eve"}})
		return err == nil, ignoreForbidden(err)
	})
	impersonating := rest.CopyConfig(eveCfg)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: identity.AgentTokenUserName("cluster1")}
	_, err = whoAmI(ctx, impersonating)
	assert.ErrorContains(t, err, "impersonate", "eve impersonates the token identity of cluster1")
	assert.True(t, apierrors.IsForbidden(err), "eve impersonates the token identity of cluster1: %v, want Forbidden", err)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	expectForbidden(t, "eve requests a token of the token identity of cluster1",
		eve.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.AgentTokenNamespace, Name: "cluster1"}}, tr))
}

// legacyIdentity checks that the hub deletes the token identity an earlier
// release made in the cluster namespace.
func (fx *agentTokenFixture) legacyIdentity(t *testing.T) {
	ctx, admin, hubCluster, agent := fx.ctx, fx.admin, fx.hub, fx.agent
	// What a hub of an earlier release left: ServiceAccount klusterlet
	// of the cluster namespace, whose token the agent holds. Created
	// unlabeled, so that the token is requested before the hub sees it.
	legacy := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: identity.LegacyAgentServiceAccount}}
	expectAllowed(t, "create ServiceAccount cluster1/klusterlet", admin.Create(ctx, legacy))
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	expectAllowed(t, "request a token of it", admin.SubResource("token").Create(ctx, legacy, tr))
	old := tokenConfig(hubCluster, []byte(tr.Status.Token))
	if who, err := whoAmI(ctx, old); err != nil || who != "system:serviceaccount:cluster1:klusterlet" {
		t.Fatalf("the earlier release's token authenticates as %q (%v)", who, err)
	}
	expectForbidden(t, "the earlier release's token reads cluster1's lease",
		clientFor(t, old, nil).Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
	legacy.Labels = map[string]string{clusterv1.ClusterNameLabelKey: "cluster1"}
	expectAllowed(t, "label it as the earlier release did", admin.Update(ctx, legacy))
	framework.Eventually(ctx, t, pollTimeout, "ServiceAccount cluster1/klusterlet deleted", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKeyFromObject(legacy), &corev1.ServiceAccount{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// A 401 makes the agent register again.
	framework.Eventually(ctx, t, pollTimeout, "the earlier release's token rejected with 401", func(ctx context.Context) (bool, error) {
		_, err := whoAmI(ctx, old)
		return apierrors.IsUnauthorized(err), nil
	})
	waitEvent(ctx, t, admin, "cluster1", "AgentTokenIdentityMoved", "kubectl ocm accept --clusters cluster1 --rejoin")
	// The token identity of the cluster is untouched.
	expectAllowed(t, "the token identity reads its lease", agent.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: clusterv1.LeaseName}, &coordinationv1.Lease{}))
}

// forgedSubject checks that a request whose subject names another cluster
// fails.
func (fx *agentTokenFixture) forgedSubject(t *testing.T) {
	ctx, admin, boot := fx.ctx, fx.admin, fx.boot
	_, forged := createTokenCSR(ctx, t, boot, "cluster1", "cluster3")
	expectAllowed(t, "an administrator approves the forged request", approveAsAdmin(ctx, admin, forged))
	framework.Eventually(ctx, t, pollTimeout, "the forged request failed", func(ctx context.Context) (bool, error) {
		return tokenState(ctx, t, admin, forged).Phase == certs.RequestDenied, nil
	})
}

// denyRevokes checks that denying the cluster revokes its tokens.
func (fx *agentTokenFixture) denyRevokes(t *testing.T) {
	ctx, admin, agent := fx.ctx, fx.admin, fx.agent
	expectAllowed(t, "deny cluster1", setAccept(ctx, admin, "cluster1", false))
	framework.Eventually(ctx, t, pollTimeout, "ServiceAccount "+tokenIdentity("cluster1").String()+" deleted", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, tokenIdentity("cluster1"), &corev1.ServiceAccount{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// The API server caches a token's authentication for seconds.
	framework.Eventually(ctx, t, pollTimeout, "the token rejected with 401", func(ctx context.Context) (bool, error) {
		err := agent.Get(ctx, client.ObjectKey{Name: "cluster1"}, &clusterv1.ManagedCluster{})
		return apierrors.IsUnauthorized(err), nil
	})
}

// tokenIdentity names the ServiceAccount of the token identity of cluster's
// agent.
func tokenIdentity(cluster string) client.ObjectKey {
	return client.ObjectKey{Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(cluster)}
}

// createTokenCSR creates, as c's user, a token-driver request labeled with
// cluster for the agent subject of subjectCluster, and returns its key and
// name.
func createTokenCSR(ctx context.Context, t *testing.T, c client.Client, cluster, subjectCluster string) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName: agentUser(subjectCluster), Organization: []string{identity.ClusterGroup(subjectCluster), identity.ManagedClustersGroup},
	}}, key)
	if err != nil {
		t.Fatal(err)
	}
	obj := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certs.AgentTokenSignerName,
			Usages:     csr.AgentUsages(),
		},
	}
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create the token request of %s: %v", cluster, err)
	}
	return key, obj.Name
}

// approveAsAdmin approves the request name as the administrator.
func approveAsAdmin(ctx context.Context, admin client.Client, name string) error {
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := admin.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return err
	}
	return csr.ApproveRequest(ctx, admin, obj, "ApprovedByTest", "approved by the hub administrator")
}

// tokenState returns the state of the request name.
func tokenState(ctx context.Context, t *testing.T, c client.Client, name string) certs.RequestState {
	t.Helper()
	obj := &certificatesv1.CertificateSigningRequest{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatalf("read request %s: %v", name, err)
	}
	return certs.StateOf(obj)
}

// tokenConfig returns a configuration of the hub that authenticates with
// token alone.
func tokenConfig(hubCluster *framework.Cluster, token []byte) *rest.Config {
	return &rest.Config{Host: hubCluster.Server(), BearerToken: string(token), TLSClientConfig: rest.TLSClientConfig{CAData: hubCluster.CAData()}}
}
