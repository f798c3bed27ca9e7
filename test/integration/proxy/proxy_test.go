package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const pollTimeout = time.Minute

// TestHubTunnel runs the tunnel of cluster1 and cluster2 and checks who may
// reach what through it.
func TestHubTunnel(t *testing.T) {
	fx := startTunnel(t)
	t.Run("a hub user without managedclusters/proxy gets 403 at the hub", fx.noProxyRight)
	t.Run("a hub user gets exactly what the managed cluster's RBAC gives the mapped identity", fx.mappedIdentity)
	t.Run("forged identity headers change nothing", fx.forgedHeaders)
	t.Run("cluster2's agent cannot attach cluster1's tunnel", fx.otherAgentAttach)
	t.Run("the tunnel endpoint refuses clients without an agent identity", fx.noAgentIdentity)
	t.Run("a namespace editor of cluster1 cannot attach its tunnel", func(t *testing.T) {
		testNamespaceEditorAttach(fx.ctx, t, fx.hub, fx.admin, fx.alice)
	})
	t.Run("a cluster whose agent is gone answers 503 until it attaches again", fx.agentGone)
	t.Run("agents attach again after the hub controller restarts", fx.tunnelRestart)
}

// tunnelFixture is what the steps of TestHubTunnel share: the hub with its
// tunnel, cluster1 and cluster2 attached to it, and alice's client of
// cluster1 through the hub.
type tunnelFixture struct {
	ctx    context.Context
	env    *framework.Environment
	hub    *framework.Cluster
	admin  client.Client
	tunnel *hubtest.Tunnel
	// stopAgent1 stops cluster1's tunnel agent.
	stopAgent1 func()
	alice      kubernetes.Interface
	// root is the test: a tunnel or agent a step starts again outlives the
	// step.
	root *testing.T
}

// startTunnel starts the hub, its tunnel and the tunnel agents of cluster1
// and cluster2; grants alice the proxy of cluster1 on the hub, view of
// team-a on cluster1 as ocm:hub:alice, and edit of team-b to the hub group
// devs; and waits until alice reaches cluster1.
func startTunnel(t *testing.T) *tunnelFixture {
	ctx, env := hubtest.Start(t, 10*time.Minute, "cluster1", "cluster2")
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 0, func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, hub.Options{}) })
	hubtest.AcceptClusters(ctx, t, admin, "cluster1", "cluster2")
	tunnel := hubtest.StartTunnel(ctx, t, hubCluster, "")
	stopAgent1 := agenttest.StartTunnelAgent(ctx, t, env, "cluster1")
	agenttest.StartTunnelAgent(ctx, t, env, "cluster2")

	// alice may proxy to cluster1 only; bob may proxy nowhere.
	grantProxy(ctx, t, admin, "alice", "cluster1")
	alice := proxyClient(t, hubCluster, "cluster1", "alice", "devs")
	waitConnected(ctx, t, alice, "cluster1")

	// On cluster1, ocm:hub:alice may read team-a, and the hub group devs
	// may edit team-b.
	c1 := env.Cluster("cluster1").Client()
	for _, ns := range []string{"team-a", "team-b"} {
		require.NoError(t, c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	bind(ctx, t, c1, "team-a", "view", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "ocm:hub:alice"})
	bind(ctx, t, c1, "team-b", "edit", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ocm:hub:devs"})
	return &tunnelFixture{ctx: ctx, env: env, hub: hubCluster, admin: admin, tunnel: tunnel, stopAgent1: stopAgent1, alice: alice, root: t}
}

// noProxyRight checks that a hub user without managedclusters/proxy gets 403
// at the hub.
func (fx *tunnelFixture) noProxyRight(t *testing.T) {
	ctx, hubCluster := fx.ctx, fx.hub
	bob := proxyClient(t, hubCluster, "cluster1", "bob")
	_, err := bob.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "bob listed through the hub: %v", err)
	assert.ErrorContains(t, err, `"managedclusters/proxy"`)
	// alice's grant names cluster1 only.
	alice2 := proxyClient(t, hubCluster, "cluster2", "alice", "devs")
	_, err = alice2.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "alice reached cluster2: %v", err)
}

// mappedIdentity checks that a hub user gets exactly what the managed
// cluster's RBAC gives the mapped identity.
func (fx *tunnelFixture) mappedIdentity(t *testing.T) {
	ctx, env, alice := fx.ctx, fx.env, fx.alice
	who := whoAmI(ctx, t, alice)
	assert.Equal(t, "ocm:hub:alice", who.Username)
	assert.Contains(t, who.Groups, "ocm:hub:devs")
	assert.Contains(t, who.Groups, "ocm:hub:system:authenticated")
	assert.NotContains(t, who.Groups, "devs")

	_, err := alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "view in team-a")
	_, err = alice.CoreV1().ConfigMaps("team-a").Create(ctx, configMap("x"), metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "view let alice create in team-a: %v", err)
	assert.ErrorContains(t, err, `"ocm:hub:alice"`, "the refusal is cluster1's, for the mapped user")
	_, err = alice.CoreV1().ConfigMaps("team-b").Create(ctx, configMap("x"), metav1.CreateOptions{})
	require.NoError(t, err, "edit in team-b through the group ocm:hub:devs")
	_, err = alice.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "alice read kube-system's Secrets: %v", err)
	_, err = alice.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "alice listed namespaces: %v", err)

	// A watch streams through the tunnel.
	w, err := alice.CoreV1().ConfigMaps("team-b").Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	_, err = env.Cluster("cluster1").Clientset().CoreV1().ConfigMaps("team-b").Create(ctx, configMap("y"), metav1.CreateOptions{})
	require.NoError(t, err)
	deadline := time.After(pollTimeout)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			seen = ok && cm.Name == "y"
		case <-deadline:
			t.Fatal("the watch through the tunnel did not see ConfigMap y")
		}
	}
}

// forgedHeaders checks that forged identity headers change nothing.
func (fx *tunnelFixture) forgedHeaders(t *testing.T) {
	ctx, hubCluster := fx.ctx, fx.hub
	cfg := proxyConfig(t, hubCluster, "cluster1", "alice", "devs")
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set(hubtunnel.UserHeader, "system:admin")
			r.Header.Add(hubtunnel.GroupHeader, "system:masters")
			r.Header.Set("X-Remote-User", "system:admin")
			r.Header.Add("X-Remote-Group", "system:masters")
			r.Header.Set("X-Remote-Extra-Scopes", "all")
			return rt.RoundTrip(r)
		})
	}
	forged := kubernetes.NewForConfigOrDie(cfg)
	who := whoAmI(ctx, t, forged)
	assert.Equal(t, "ocm:hub:alice", who.Username)
	assert.NotContains(t, who.Groups, "system:masters")
	assert.NotContains(t, who.Groups, "ocm:hub:system:masters")
	assert.Empty(t, who.Extra)
	_, err := forged.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "forged headers read kube-system's Secrets: %v", err)

	// Impersonation is the hub's to decide: alice may not impersonate
	// there, so the hub refuses before anything reaches the tunnel.
	cfg = proxyConfig(t, hubCluster, "cluster1", "alice", "devs")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:admin"}
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "alice impersonated system:admin: %v", err)
	assert.ErrorContains(t, err, "impersonate")
}

// otherAgentAttach checks that cluster2's agent cannot attach cluster1's
// tunnel.
func (fx *tunnelFixture) otherAgentAttach(t *testing.T) {
	ctx, hubCluster, alice := fx.ctx, fx.hub, fx.alice
	cfg := agenttest.AgentConfig(t, hubCluster, "cluster2", "agent2")
	// The hub's RBAC lets every agent ask to attach any cluster's tunnel
	// (the agents' shared ClusterRole: docs/design/authorization.md); the
	// tunnel server refuses all but the cluster's own agent.
	status, body := attach(t, hubCluster, cfg, "cluster1")
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Contains(t, body, "only the agent of cluster cluster1")
	// cluster1 is still answered by its own agent.
	_, err := alice.CoreV1().ConfigMaps("team-b").Get(ctx, "x", metav1.GetOptions{})
	require.NoError(t, err)
}

// noAgentIdentity checks that the tunnel endpoint refuses clients without an
// agent identity.
func (fx *tunnelFixture) noAgentIdentity(t *testing.T) {
	ctx, hubCluster, admin, tunnel := fx.ctx, fx.hub, fx.admin, fx.tunnel
	grant(ctx, t, admin, "mallory-attach", []string{"get"}, hubtunnel.AttachSubresource, "cluster1",
		rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"})
	mallory, err := hubCluster.ConfigForUser("mallory", identity.ClusterGroup("cluster1"))
	require.NoError(t, err)
	framework.Eventually(ctx, t, pollTimeout, "the tunnel server refusing mallory", func(ctx context.Context) (bool, error) {
		status, body := attach(t, hubCluster, mallory, "cluster1")
		return status == http.StatusForbidden && strings.Contains(body, "is not its agent identity"), nil
	})
	anonymous := &rest.Config{Host: hubCluster.Server(), TLSClientConfig: rest.TLSClientConfig{CAData: hubCluster.CAData()}}
	status, body := attach(t, hubCluster, anonymous, "cluster1")
	assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status, body)

	// The server itself answers only the hub's API server: a client
	// certificate of the hub's own CA is not the front proxy's.
	user, err := hubCluster.ConfigForUser(identity.AgentUserName("cluster1", "agent9"), identity.ClusterGroup("cluster1"))
	require.NoError(t, err)
	direct := rest.CopyConfig(user)
	direct.Host = "https://" + tunnel.Address
	direct.CAData, direct.Insecure = nil, true
	status, body = attachAt(t, direct, "cluster1")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.Contains(t, body, "front proxy")
}

// agentGone checks that a cluster whose agent is gone answers 503 until it
// attaches again.
func (fx *tunnelFixture) agentGone(t *testing.T) {
	ctx, env, alice, tunnel, stopAgent1, outer := fx.ctx, fx.env, fx.alice, fx.tunnel, fx.stopAgent1, fx.root
	stopAgent1()
	framework.Eventually(ctx, t, pollTimeout, "cluster1's tunnel gone", func(ctx context.Context) (bool, error) {
		return !tunnel.Server.Connected("cluster1"), nil
	})
	_, err := alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
	assert.ErrorContains(t, err, "cluster cluster1 has no tunnel to the hub")
	agenttest.StartTunnelAgent(ctx, outer, env, "cluster1")
	waitConnected(ctx, t, alice, "cluster1")
}

// tunnelRestart checks that agents attach again after the hub controller
// restarts.
func (fx *tunnelFixture) tunnelRestart(t *testing.T) {
	ctx, hubCluster, alice, outer := fx.ctx, fx.hub, fx.alice, fx.root
	fx.tunnel.Stop()
	fx.tunnel = hubtest.StartTunnel(ctx, outer, hubCluster, fx.tunnel.Address)
	waitConnected(ctx, t, alice, "cluster1")
	framework.Eventually(ctx, t, pollTimeout, "cluster2 attached again", func(ctx context.Context) (bool, error) {
		return fx.tunnel.Server.Connected("cluster2"), nil
	})
}

// proxyConfig returns the configuration of user in groups for cluster
// through the hub: the hub's server with cluster's proxy path.
func proxyConfig(t *testing.T, hubCluster *framework.Cluster, cluster, user string, groups ...string) *rest.Config {
	t.Helper()
	cfg, err := hubCluster.ConfigForUser(user, groups...)
	require.NoError(t, err)
	cfg.Host = hubCluster.Server() + hubtunnel.ProxyPath(cluster)
	return cfg
}

func proxyClient(t *testing.T, hubCluster *framework.Cluster, cluster, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(proxyConfig(t, hubCluster, cluster, user, groups...))
}

// waitConnected waits until c reaches cluster's API server through the hub.
func waitConnected(ctx context.Context, t *testing.T, c kubernetes.Interface, cluster string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, cluster+" answering through the hub", func(ctx context.Context) (bool, error) {
		_, err := c.Discovery().ServerVersion()
		return err == nil, nil
	})
}

func whoAmI(ctx context.Context, t *testing.T, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return review.Status.UserInfo
}

// grantProxy lets user use every verb of managedclusters/proxy on cluster.
func grantProxy(ctx context.Context, t *testing.T, admin client.Client, user, cluster string) {
	t.Helper()
	grant(ctx, t, admin, user+"-proxy-"+cluster, []string{"get", "create", "update", "patch", "delete"}, hubtunnel.ProxySubresource, cluster,
		rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
}

// grant binds a ClusterRole named name with verbs on subresource of
// managedclusters cluster to subject on the hub.
func grant(ctx context.Context, t *testing.T, admin client.Client, name string, verbs []string, subresource, cluster string, subject rbacv1.Subject) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{hubtunnel.Group}, Resources: []string{hubtunnel.Resource + "/" + subresource},
			ResourceNames: []string{cluster}, Verbs: verbs}},
	}
	require.NoError(t, admin.Create(ctx, role))
	require.NoError(t, admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}))
}

// bind binds ClusterRole role to subject in namespace ns of a cluster.
func bind(ctx context.Context, t *testing.T, c client.Client, ns, role string, subject rbacv1.Subject) {
	t.Helper()
	require.NoError(t, c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role + "-" + strings.ReplaceAll(subject.Name, ":", "-")},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}))
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// attach opens cluster's tunnel at the hub as cfg's user and returns the
// handshake's HTTP status and body.
func attach(t *testing.T, hubCluster *framework.Cluster, cfg *rest.Config, cluster string) (int, string) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.Host = hubCluster.Server()
	return attachAt(t, cfg, cluster)
}

// attachAt opens cluster's tunnel at cfg.Host, authenticated by cfg's
// client certificate or bearer token, as the user cfg impersonates if any.
func attachAt(t *testing.T, cfg *rest.Config, cluster string) (int, string) {
	t.Helper()
	url, err := proxyagent.AttachURL(cfg.Host, cluster)
	require.NoError(t, err)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	require.NoError(t, err)
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	header := http.Header{}
	if cfg.BearerToken != "" {
		header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	if cfg.Impersonate.UserName != "" {
		header.Set(authenticationv1.ImpersonateUserHeader, cfg.Impersonate.UserName)
	}
	dialer := &websocket.Dialer{TLSClientConfig: tlsConfig, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.Dial(url, header)
	if err == nil {
		_ = conn.Close()
		return http.StatusSwitchingProtocols, ""
	}
	if resp == nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, fmt.Sprintf("%s: %s", resp.Status, body)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
