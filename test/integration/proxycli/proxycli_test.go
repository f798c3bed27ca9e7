package proxycli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	pollTimeout = time.Minute
	// robot is the hub ServiceAccount apps/robot's user name.
	robot = "system:serviceaccount:apps:robot"
)

// TestProxyKubeconfigAndCredentials writes kubeconfigs for cluster1 through
// the hub with `kubectl ocm proxy kubeconfig` as hub users, and has real
// kubectl use them: with a copy of the user's credential, and with
// `kubectl-ocm credentials` as their exec plugin.
func TestProxyKubeconfigAndCredentials(t *testing.T) {
	fx := startProxy(t)
	t.Run("without managedclusters/proxy: the kubeconfig, and a warning naming the grant, which works", fx.grantWarning)
	t.Run("kubectl reaches cluster1 with the kubeconfig written, as ocm:hub:alice", fx.kubeconfigReaches)
	t.Run("an unknown cluster is an error and writes nothing", fx.unknownCluster)
	t.Run("a user without the grant gets the warning, and 403 from kubectl", fx.noGrant)
	fx.addRobot(t)
	fx.execPlugin(t)
	t.Run("kubectl-ocm credentials prints the token with the JWT's expiry, and nothing else", fx.credentialsPrint)
	t.Run("kubectl-ocm credentials hands the credential to its own hub's tunnel only", fx.ownHubOnly)
	t.Run("a cluster whose agent is not attached: the kubeconfig, and a warning saying so", fx.agentDetached)
}

// proxyFixture is what the steps of TestProxyKubeconfigAndCredentials
// share: a hub whose tunnel cluster1's agent attached to, the kubectl-ocm
// binary, real kubectl, and the hub users alice and (once addRobot ran)
// apps/robot.
type proxyFixture struct {
	ctx       context.Context
	env       *framework.Environment
	hub       *framework.Cluster
	admin     client.Client
	tunnel    *hubtest.Tunnel
	stopAgent func()
	// plugin is the kubectl-ocm binary, k real kubectl.
	plugin string
	k      kubectl
	// asAlice runs kubectl ocm as alice, whose kubeconfig is alice.
	asAlice clitest.CLI
	alice   string
	// dir holds the kubeconfigs the steps write; proxyServer is cluster1's
	// URL through the hub.
	dir, proxyServer string
	// robotHub is a hub kubeconfig of apps/robot with its token, issued at
	// issued.
	robotHub, token string
	issued          time.Time
}

// startProxy starts the hub and cluster1, the hub controllers, the tunnel
// and cluster1's tunnel agent, and gives alice and apps/robot the view role
// of namespace team-a on cluster1, and alice the right to read
// ManagedClusters on the hub.
func startProxy(t *testing.T) *proxyFixture {
	ctx, env := hubtest.Start(t, 10*time.Minute, "cluster1")
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 0, func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, hub.Options{}) })
	hubtest.AcceptClusters(ctx, t, admin, "cluster1")
	tunnel := hubtest.StartTunnel(ctx, t, hubCluster, "")
	stopAgent := agenttest.StartTunnelAgent(ctx, t, env, "cluster1")
	plugin := framework.BuildForTest(t, "./plugins/kubectl-ocm", "kubectl-ocm")
	k := newKubectl(t, hubCluster)
	framework.Eventually(ctx, t, pollTimeout, "cluster1's tunnel attached", func(context.Context) (bool, error) {
		return tunnel.Server.Connected("cluster1"), nil
	})

	// On cluster1, hub users alice and apps/robot may view namespace team-a,
	// which holds ConfigMap hello.
	c1 := env.Cluster("cluster1").Client()
	require.NoError(t, c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))
	require.NoError(t, c1.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hello"}}))
	for _, user := range []string{"alice", robot} {
		require.NoError(t, c1.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "view-" + strings.ReplaceAll(user, ":", "-")},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: hubtunnel.MappedUser(user)}},
		}))
	}
	// On the hub, alice may read ManagedClusters; bob may not. Their
	// kubeconfigs name certificate files, which `proxy kubeconfig` embeds.
	asAlice := clitest.AsUser(ctx, t, hubCluster, clitest.User{Name: "alice", CertFiles: true, Grants: []clitest.Grant{
		{Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "list"}}}},
	}})
	alice := asAlice.Kubeconfig
	dir := t.TempDir()
	proxyServer := hubCluster.Server() + hubtunnel.ProxyPath("cluster1")
	return &proxyFixture{ctx: ctx, env: env, hub: hubCluster, admin: admin, tunnel: tunnel, stopAgent: stopAgent,
		plugin: plugin, k: k, asAlice: asAlice, alice: alice, dir: dir, proxyServer: proxyServer}
}

// grantWarning checks that a user without managedclusters/proxy gets the
// kubeconfig and a warning naming the grant, and that the grant works.
func (fx *proxyFixture) grantWarning(t *testing.T) {
	ctx, k, asAlice, proxyServer := fx.ctx, fx.k, fx.asAlice, fx.proxyServer
	r := asAlice.Run(ctx, "proxy", "kubeconfig", "cluster1")
	clitest.ExpectOK(t, r, "current-context: cluster1-via-hub", "server: "+proxyServer, "client-certificate-data: ")
	assert.Contains(t, r.ErrOut, `Warning: cluster1 does not answer through the hub: you (User "alice") may not use managedclusters/proxy of cluster1 on the hub. A hub admin grants it with:`)
	// The hub admin runs the commands of the warning, as a shell script,
	// with real kubectl.
	_, script, ok := strings.Cut(r.ErrOut, "A hub admin grants it with:\n")
	script, _, ok2 := strings.Cut(script, "\nThe hub said: ")
	require.True(t, ok && ok2, "the warning holds no script:\n%s", r.ErrOut)
	k.mustShell(ctx, t, script)
	waitAnswers(ctx, t, asAlice)
}

// kubeconfigReaches checks that kubectl reaches cluster1 with the kubeconfig
// written, as ocm:hub:alice.
func (fx *proxyFixture) kubeconfigReaches(t *testing.T) {
	ctx, k, asAlice, dir, proxyServer := fx.ctx, fx.k, fx.asAlice, fx.dir, fx.proxyServer
	file := filepath.Join(dir, "alice-cluster1.kubeconfig")
	r := asAlice.Run(ctx, "proxy", "kubeconfig", "cluster1", "-n", "team-a", "--output-file", file)
	clitest.ExpectOK(t, r, "Wrote "+file+": its context cluster1-via-hub reaches cluster cluster1 through the hub, at "+proxyServer)
	assert.Regexp(t, `^cluster1 answers through the hub \(Kubernetes v1\.\d+\.\d+.*\)\n$`, r.ErrOut)
	info, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(data), "client-certificate-data: ", "the certificate file is embedded")
	assert.NotContains(t, string(data), "client-certificate: ")
	assert.Contains(t, string(data), "namespace: team-a")

	assert.Equal(t, "configmap/hello\n", k.mustRun(ctx, t, file, "get", "configmap", "hello", "-o", "name"))
	assert.Equal(t, "ocm:hub:alice", k.mustRun(ctx, t, file, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
	out, err := k.run(ctx, file, "get", "secrets", "-n", "kube-system")
	require.Error(t, err, out)
	assert.Contains(t, out, `User "ocm:hub:alice" cannot list resource "secrets"`)
}

// unknownCluster checks that an unknown cluster is an error and writes nothing.
func (fx *proxyFixture) unknownCluster(t *testing.T) {
	ctx, asAlice, dir := fx.ctx, fx.asAlice, fx.dir
	file := filepath.Join(dir, "cluster9.kubeconfig")
	r := asAlice.Run(ctx, "proxy", "kubeconfig", "cluster9", "--output-file", file)
	clitest.ExpectErr(t, r, `managed cluster "cluster9" does not exist on the hub`, "`kubectl ocm get clusters`")
	assert.Empty(t, r.Out)
	assert.NoFileExists(t, file)
}

// noGrant checks that a user without the grant gets the warning, and 403 from
// kubectl.
func (fx *proxyFixture) noGrant(t *testing.T) {
	ctx, hubCluster, k, dir := fx.ctx, fx.hub, fx.k, fx.dir
	asBob := clitest.AsUser(ctx, t, hubCluster, clitest.User{Name: "bob", CertFiles: true})
	file := filepath.Join(dir, "bob-cluster1.kubeconfig")
	r := asBob.Run(ctx, "proxy", "kubeconfig", "cluster1", "--output-file", file)
	clitest.ExpectOK(t, r, "Wrote "+file)
	// bob may not read ManagedClusters either: the check is a warning.
	assert.Contains(t, r.ErrOut, `Warning: cannot check that managed cluster "cluster1" exists`)
	assert.Contains(t, r.ErrOut, `you (User "bob") may not use managedclusters/proxy of cluster1 on the hub`)
	assert.Contains(t, r.ErrOut, "\nkubectl create clusterrolebinding ocm-proxy-cluster1-bob --clusterrole=ocm-proxy-cluster1 --user=bob\n")
	out, err := k.run(ctx, file, "get", "configmaps", "-n", "team-a")
	require.Error(t, err, out)
	assert.Contains(t, out, "Error from server (Forbidden)")
}

// agentDetached checks that for a cluster whose agent is not attached the
// user gets the kubeconfig and a warning saying so.
func (fx *proxyFixture) agentDetached(t *testing.T) {
	ctx, tunnel, stopAgent, asAlice := fx.ctx, fx.tunnel, fx.stopAgent, fx.asAlice
	stopAgent()
	framework.Eventually(ctx, t, pollTimeout, "cluster1's tunnel gone", func(context.Context) (bool, error) {
		return !tunnel.Server.Connected("cluster1"), nil
	})
	r := asAlice.Run(ctx, "proxy", "kubeconfig", "cluster1")
	clitest.ExpectOK(t, r, "current-context: cluster1-via-hub")
	assert.Contains(t, r.ErrOut, "Warning: cluster1 does not answer through the hub: its agent has no tunnel attached to the hub.")
	assert.Contains(t, r.ErrOut, "turns the HubTunnel feature gate off")
}

// waitAnswers waits until `proxy kubeconfig cluster1` as cli's user reports
// that cluster1 answers through the hub: the hub's RBAC caches take a moment
// to see a new grant.
func waitAnswers(ctx context.Context, t *testing.T, cli clitest.CLI) {
	t.Helper()
	var last clitest.Result
	framework.Eventually(ctx, t, pollTimeout, "cluster1 answering "+cli.Kubeconfig+" through the hub", func(ctx context.Context) (bool, error) {
		last = cli.Run(ctx, "proxy", "kubeconfig", "cluster1")
		if last.Err != nil {
			return false, last.Err
		}
		if !strings.Contains(last.ErrOut, "cluster1 answers through the hub (Kubernetes v") {
			return false, fmt.Errorf("%s", last.ErrOut)
		}
		return true, nil
	})
}

// kubectl runs the real kubectl of the Kubernetes binaries.
type kubectl struct {
	bin, cacheDir string
	// hubAdmin is a kubeconfig of the hub's admin.
	hubAdmin string
}

// newKubectl finds kubectl ($KUBE_BIN_DIR, else bin/kube) and writes a
// kubeconfig of hubCluster's admin for its scripts.
func newKubectl(t *testing.T, hubCluster *framework.Cluster) kubectl {
	t.Helper()
	dir, err := framework.KubeBinDir()
	require.NoError(t, err)
	bin := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kubectl not found: %v; run 'make kube-bins'", err)
	}
	k := kubectl{bin: bin, cacheDir: t.TempDir()}
	k.hubAdmin = filepath.Join(k.cacheDir, "hub-admin.kubeconfig")
	require.NoError(t, framework.WriteKubeconfig(k.hubAdmin, "hub", hubCluster.RESTConfig()))
	return k
}

// mustShell runs script with sh as the hub's admin would: kubectl on the
// PATH, and KUBECONFIG the admin's, whose current context is the hub.
func (k kubectl) mustShell(ctx context.Context, t *testing.T, script string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(k.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+k.hubAdmin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "sh -c %q:\n%s", script, out)
	t.Logf("$ %s\n%s", script, out)
}

// run runs kubectl --kubeconfig kubeconfig args and returns its stdout, or
// its stdout and stderr with the error.
func (k kubectl) run(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", k.cacheDir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// mustRun is run, failing t on an error.
func (k kubectl) mustRun(ctx context.Context, t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := k.run(ctx, kubeconfig, args...)
	require.NoError(t, err, out)
	return out
}
