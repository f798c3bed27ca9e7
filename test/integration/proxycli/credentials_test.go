package proxycli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/proxy"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// addRobot creates the hub ServiceAccount apps/robot with a token, writes
// its hub kubeconfig and grants it the proxy of cluster1.
func (fx *proxyFixture) addRobot(t *testing.T) {
	ctx, admin, hubCluster, dir, k := fx.ctx, fx.admin, fx.hub, fx.dir, fx.k
	// robot is a ServiceAccount of the hub, with a token.
	require.NoError(t, admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}))
	require.NoError(t, admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "robot"}}))
	issued := time.Now()
	token, err := hubCluster.ServiceAccountToken(ctx, "apps", "robot", time.Hour)
	require.NoError(t, err)
	robotHub := filepath.Join(dir, "robot-hub.kubeconfig")
	require.NoError(t, framework.WriteKubeconfig(robotHub, "hub", &rest.Config{Host: hubCluster.Server(), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: hubCluster.CAData()}}))
	// The ClusterRole exists: the admin binds it to robot as the grant's
	// second command says.
	binding := proxy.GrantBinding("cluster1", robot)
	require.Contains(t, binding, "--serviceaccount=apps:robot")
	k.mustShell(ctx, t, binding)
	fx.robotHub, fx.token, fx.issued = robotHub, token, issued
}

// execPlugin checks, a step for a client certificate user and one for a
// ServiceAccount token user, that kubectl reaches cluster1 with
// kubectl-ocm credentials as its exec plugin.
func (fx *proxyFixture) execPlugin(t *testing.T) {
	ctx, alice, robotHub, dir, k, plugin := fx.ctx, fx.alice, fx.robotHub, fx.dir, fx.k, fx.plugin
	for _, tc := range []struct {
		name, user, hubKubeconfig string
	}{
		{"a client certificate user", "alice", alice},
		{"a ServiceAccount token user", robot, robotHub},
	} {
		t.Run("kubectl-ocm credentials as the exec plugin of "+tc.name, func(t *testing.T) {
			hubUser := clitest.CLI{Kubeconfig: tc.hubKubeconfig, Context: "hub"}
			file := filepath.Join(dir, "exec-"+strings.ReplaceAll(tc.user, ":", "-")+".kubeconfig")
			waitAnswers(ctx, t, hubUser)
			clitest.ExpectOK(t, hubUser.Run(ctx, "proxy", "kubeconfig", "cluster1", "-n", "team-a", "--output-file", file))
			// As `kubectl ocm credentials --help` shows it.
			k.mustRun(ctx, t, file, "config", "delete-user", "cluster1-via-hub")
			k.mustRun(ctx, t, file, "config", "set-credentials", "cluster1-via-hub",
				"--exec-api-version="+hubtunnel.ExecAPIVersion, "--exec-interactive-mode=Never", "--exec-provide-cluster-info=true",
				"--exec-command="+plugin, "--exec-arg=credentials", "--exec-arg=--context=hub",
				"--exec-env=KUBECONFIG="+tc.hubKubeconfig)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.NotContains(t, string(data), "client-certificate-data")
			assert.NotContains(t, string(data), "token:")

			assert.Equal(t, "configmap/hello\n", k.mustRun(ctx, t, file, "get", "configmap", "hello", "-o", "name"))
			assert.Equal(t, hubtunnel.MappedUser(tc.user), k.mustRun(ctx, t, file, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
		})
	}
}

// credentialsPrint checks that kubectl-ocm credentials prints the token with
// the JWT's expiry, and nothing else.
func (fx *proxyFixture) credentialsPrint(t *testing.T) {
	ctx, plugin, robotHub, token, issued := fx.ctx, fx.plugin, fx.robotHub, fx.token, fx.issued
	stdout, stderr, err := runPlugin(ctx, plugin, robotHub, "", "credentials", "--context", "hub")
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr)
	cred := &clientauthv1.ExecCredential{}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(cred), stdout)
	assert.False(t, dec.More(), "stdout holds more than the ExecCredential: %s", stdout)
	assert.Equal(t, hubtunnel.ExecAPIVersion, cred.APIVersion)
	require.NotNil(t, cred.Status)
	assert.Equal(t, token, cred.Status.Token)
	require.NotNil(t, cred.Status.ExpirationTimestamp)
	assert.WithinDuration(t, issued.Add(time.Hour), cred.Status.ExpirationTimestamp.Time, time.Minute)

	stdout, stderr, err = runPlugin(ctx, plugin, robotHub, `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{}}`, "credentials")
	require.Error(t, err)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `asks for an ExecCredential of apiVersion "client.authentication.k8s.io/v1beta1"`)
}

// ownHubOnly checks that kubectl-ocm credentials hands the credential to its
// own hub's tunnel only.
func (fx *proxyFixture) ownHubOnly(t *testing.T) {
	ctx, hubCluster, env, plugin, k, dir, proxyServer, robotHub, token := fx.ctx, fx.hub, fx.env, fx.plugin, fx.k, fx.dir, fx.proxyServer, fx.robotHub, fx.token
	cluster1 := env.Cluster("cluster1")
	// What client-go hands the plugin with provideClusterInfo, for the
	// hub's proxy path of cluster1: the token.
	stdout, stderr, err := runPlugin(ctx, plugin, robotHub, execInfo(proxyServer), "credentials", "--context", "hub")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, `"token":"`+token+`"`)

	// Real kubectl, with exec sections that run the plugin.
	for _, tc := range []struct {
		name string
		// server is the kubeconfig's server, hubKubeconfig the
		// plugin's KUBECONFIG.
		server, hubKubeconfig string
		caData                []byte
		provideClusterInfo    bool
		want                  []string
	}{
		{"without provideClusterInfo", proxyServer, robotHub, hubCluster.CAData(), false,
			[]string{"KUBERNETES_EXEC_INFO names no server", "provideClusterInfo: true"}},
		// A ClusterProfile or kubeconfig naming another cluster's API
		// server as a cluster of this provider's.
		{"another cluster's API server", cluster1.Server(), robotHub, cluster1.CAData(), true,
			[]string{"refusing to hand the credential for hub " + schemeHost(t, hubCluster.Server()), `to server "` + cluster1.Server() + `": it is not that hub`}},
		// The hub credential the plugin would pass is another cluster's:
		// its kubeconfig's current context is not the hub.
		{"a credential of another cluster for the hub", proxyServer, cluster1Kubeconfig(ctx, t, cluster1, dir), hubCluster.CAData(), true,
			[]string{"refusing to hand the credential for hub " + schemeHost(t, cluster1.Server()), `to server "` + proxyServer + `": it is not that hub`}},
		{"the hub's own API outside the tunnel", hubCluster.Server() + "/api/v1/namespaces/kube-system", robotHub, hubCluster.CAData(), true,
			[]string{`its path "/api/v1/namespaces/kube-system" is not under /apis/proxy.kubectl-ocm.io/`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "refused-"+strings.ReplaceAll(tc.name, " ", "-")+".kubeconfig")
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: tc.server, CertificateAuthorityData: tc.caData}
			cfg.AuthInfos["c"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
				APIVersion: hubtunnel.ExecAPIVersion, Command: plugin, Args: []string{"credentials"}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
				Env: []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: tc.hubKubeconfig}}, ProvideClusterInfo: tc.provideClusterInfo,
			}}
			cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
			cfg.CurrentContext = "c"
			require.NoError(t, clientcmd.WriteToFile(*cfg, file))
			out, err := k.run(ctx, file, "get", "configmaps", "-n", "team-a")
			require.Error(t, err, out)
			for _, want := range tc.want {
				assert.Contains(t, out, want)
			}
		})
	}
}

// execInfo returns the KUBERNETES_EXEC_INFO client-go sets for an exec
// section with provideClusterInfo, for server.
func execInfo(server string) string {
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":%q}}}`, hubtunnel.ExecAPIVersion, server)
}

// schemeHost returns scheme://host:port of server.
func schemeHost(t *testing.T, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	require.NoError(t, err)
	return u.Scheme + "://" + u.Host
}

// cluster1Kubeconfig writes, in dir, a kubeconfig of a ServiceAccount token
// of cluster1 (apps/robot there), and returns its path.
func cluster1Kubeconfig(ctx context.Context, t *testing.T, cluster1 *framework.Cluster, dir string) string {
	t.Helper()
	c := cluster1.Client()
	require.NoError(t, client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})))
	require.NoError(t, client.IgnoreAlreadyExists(c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "robot"}})))
	cfg, err := cluster1.ConfigForServiceAccount(ctx, "apps", "robot", time.Hour)
	require.NoError(t, err)
	path := filepath.Join(dir, "robot-cluster1.kubeconfig")
	require.NoError(t, framework.WriteKubeconfig(path, "hub", cfg))
	return path
}

// runPlugin runs the built kubectl-ocm with KUBECONFIG=kubeconfig and, when
// execInfo is not empty, KUBERNETES_EXEC_INFO=execInfo.
func runPlugin(ctx context.Context, plugin, kubeconfig, execInfo string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, plugin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if execInfo != "" {
		cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+execInfo)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
