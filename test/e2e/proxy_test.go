package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testJoinThroughAProxy joins cluster1 with `join --proxy-url`, giving the
// hub by a name that only the HTTP proxy resolves: the agent, a Pod on
// cluster1's node, reaches the hub through the proxy or not at all. The hub
// signs short certificates, so the agent rotates its certificate while the
// test runs, and must keep the proxy across the rotation: works keep
// applying and the cluster stays Available.
func testJoinThroughAProxy(t *testing.T) {
	parallel(t)
	f := startFleetWith(t, framework.Options{Clusters: []string{"hub", "cluster1"}, ClusterSigningDuration: certLifetime})
	hubCluster := f.env.Cluster("hub")
	server, err := url.Parse(hubCluster.Server())
	require.NoError(t, err)
	proxy := framework.StartHTTPProxyForTest(t, server.Hostname(), hubCluster)
	target := strings.TrimPrefix(hubCluster.HostnameURL(), "https://")
	hub, managed := hubCluster.Client(), f.env.Cluster("cluster1").Client()

	initOut := f.hubInit(t)
	token, _ := joinArgs(t, initOut)
	pin := pinFlags(t, initOut)[1]
	t.Run("a proxy that does not answer fails the join, which installs nothing", func(t *testing.T) {
		dead := "http://" + server.Hostname() + ":1"
		out, err := f.tryOCM(t, "join", "--hub-token", token, "--hub-apiserver", hubCluster.HostnameURL(), "--ca-cert-hash", pin, "--proxy-url", dead,
			"--cluster-name", "cluster1", "--context", "cluster1")
		require.Error(t, err)
		assert.Contains(t, out, "cannot reach the hub at "+hubCluster.HostnameURL()+" through --proxy-url "+dead)
		assert.Contains(t, out, "check --hub-apiserver and --proxy-url")
		err = managed.Get(t.Context(), client.ObjectKey{Name: "klusterlet"}, &operatorv1.Klusterlet{})
		assert.True(t, apierrors.IsNotFound(err) || meta.IsNoMatchError(err), "a failed join left a Klusterlet: %v", err)
	})
	f.ocm(t, "join", "--hub-token", token, "--hub-apiserver", hubCluster.HostnameURL(), "--ca-cert-hash", pin, "--proxy-url", proxy.URL(),
		"--cluster-name", "cluster1", "--context", "cluster1")
	f.ocm(t, "accept", "--clusters", "cluster1", "--context", "hub", "--wait")
	waitJoinedAvailable(t, hub, "cluster1")
	assert.Positive(t, proxy.Tunnels(target), "no tunnel to %s through the proxy", target)

	for _, name := range []string{"bootstrap-hub-kubeconfig", operatorv1.HubKubeConfigSecret} {
		assertProxied(t, managed, name, hubCluster.HostnameURL(), proxy.URL())
	}

	available := watchAvailable(t, hubCluster, "cluster1")
	first := agentCertificate(t, managed)
	tunnels := proxy.Tunnels(target)
	framework.Eventually(t.Context(), t, 3*time.Minute, "the agent's certificate rotated", func(context.Context) (bool, error) {
		return agentCertificate(t, managed).SerialNumber.Cmp(first.SerialNumber) != 0, nil
	})
	assertProxied(t, managed, operatorv1.HubKubeConfigSecret, hubCluster.HostnameURL(), proxy.URL())
	require.NoError(t, hub.Create(t.Context(), configMapWork("cluster1", "after-rotation", 1, "v1")))
	waitWorkApplied(t, hub, "cluster1", "after-rotation", 2*time.Minute)
	assertAppliedOnce(t, managed, "after-rotation", 1)
	assert.Greater(t, proxy.Tunnels(target), tunnels, "the agent opened no tunnel with its new certificate")
	assert.Empty(t, available.transitions(), "cluster1 left Available during the rotation")
}

// assertProxied checks that the kubeconfig of Secret name, in the agent's
// namespace of cluster managed, reaches server through proxy.
func assertProxied(t *testing.T, managed client.Client, name, server, proxy string) {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, managed.Get(t.Context(), client.ObjectKey{Namespace: "open-cluster-management-agent", Name: name}, s))
	info, err := kubeconfig.FromSecret(s.Data)
	require.NoError(t, err, "the kubeconfig of Secret %s", name)
	assert.Equal(t, server, info.Server, "the server of Secret %s", name)
	assert.Equal(t, proxy, info.ProxyURL, "the proxy of Secret %s", name)
}
