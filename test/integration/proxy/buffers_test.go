package proxy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestSlowReaders opens many proxied requests through cluster1's tunnel
// (a real agent) whose answers are large and never read, as a hub user
// with proxy rights on one cluster may, and checks that the hub controller
// holds no more of them than its buffer budget, closes the slow
// connections (over the budget at once, the rest by the budget or after the
// write timeout) and still answers a client that reads through the same
// tunnel.
func TestSlowReaders(t *testing.T) {
	const (
		budget       = 8 << 20
		writeTimeout = 20 * time.Second
		slowReaders  = 8
		// Each answer is a list of 32 ConfigMaps of 1 MB, sent uncompressed: more than
		// the buffers between the hub controller and the client (HTTP/2
		// flow-control windows of the hub's API server and the client,
		// socket buffers) take before the tunnel's buffer fills.
		configMaps = 32
	)
	ctx, env := hubtest.Start(t, 10*time.Minute, "cluster1")
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 0, func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, hub.Options{}) })
	hubtest.AcceptClusters(ctx, t, admin, "cluster1")
	tunnel := hubtest.StartTunnelWithLimits(ctx, t, hubCluster, "", proxyhub.Limits{BufferBudget: budget, WriteTimeout: writeTimeout})
	agenttest.StartTunnelAgent(ctx, t, env, "cluster1")
	grantProxy(ctx, t, admin, "mallory", "cluster1")
	grantProxy(ctx, t, admin, "alice", "cluster1")
	alice := proxyClient(t, hubCluster, "cluster1", "alice")
	waitConnected(ctx, t, alice, "cluster1")

	c1 := env.Cluster("cluster1").Client()
	require.NoError(t, c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "big"}}))
	bind(ctx, t, c1, "big", "view", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ocm:hub:system:authenticated"})
	for i := range configMaps {
		// Random, so that no compression on the way shrinks the answer.
		value := make([]byte, 750_000)
		_, _ = rand.Read(value)
		require.NoError(t, c1.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "big", Name: fmt.Sprintf("big-%02d", i), Labels: map[string]string{"size": "big"}},
			Data:       map[string]string{"data": base64.StdEncoding.EncodeToString(value)},
		}))
	}
	const selector = "size=big"
	path := "/api/v1/namespaces/big/configmaps?labelSelector=" + url.QueryEscape(selector)

	// mallory opens the requests and reads nothing of their answers. A
	// request may end before its answer's first bytes reach it: the hub
	// closed its connection over the budget, already filled by the answers
	// of the requests before it (a fast agent fills it before the last
	// request is sent).
	var slow []*http.Response
	for range slowReaders {
		resp := openUnreadPath(ctx, t, hubCluster, "mallory", "cluster1", path)
		if resp == nil {
			s := tunnel.Server.Buffers()
			require.Positive(t, s.ClosedOverBudget, "a slow reader's request ended with no connection closed over the budget: %+v", s)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			t.Fatalf("a slow reader's request: %s: %s", resp.Status, body)
		}
		slow = append(slow, resp)
	}
	logged := time.Now()
	framework.Eventually(ctx, t, 2*time.Minute, "the hub closing a slow reader's connection over its buffer budget", func(context.Context) (bool, error) {
		s := tunnel.Server.Buffers()
		if time.Since(logged) > 5*time.Second {
			t.Logf("held: %+v", s)
			logged = time.Now()
		}
		return s.ClosedOverBudget > 0, nil
	})
	stats := tunnel.Server.Buffers()
	t.Logf("over the budget: %+v", stats)
	assert.LessOrEqual(t, stats.Peak, int64(budget+proxyhub.MaxTunnelMessage), "the proxied connections held more than the budget")
	assert.Zero(t, stats.ClosedStalled, "a connection was closed for the write timeout before the budget acted")

	// A client that reads gets its whole answer through the same tunnel.
	list, err := alice.CoreV1().ConfigMaps("big").List(ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	assert.Equal(t, configMaps, len(list.Items), "alice's list")

	// The slow readers left are closed, by the budget or after the write
	// timeout, whichever comes first, and the tunnel holds nothing more for
	// any of them. On an idle machine the write timeout closes one or two
	// (stall_test.go tests it on its own); on a busy one the agent's answers
	// fill the budget first and it closes them all. A connection's timeout
	// starts only once its client's buffers are full, which on a busy
	// machine the agent's share of the answers takes a while to do.
	framework.Eventually(ctx, t, writeTimeout+3*time.Minute, "every slow reader's connection closed", func(context.Context) (bool, error) {
		s := tunnel.Server.Buffers()
		if s.ClosedOverBudget+s.ClosedStalled >= slowReaders && s.Held == 0 {
			return true, nil
		}
		return false, fmt.Errorf("%d of %d slow readers closed, %d bytes held: %+v", s.ClosedOverBudget+s.ClosedStalled, slowReaders, s.Held, s)
	})
	stats = tunnel.Server.Buffers()
	t.Logf("at the end: %+v", stats)
	assert.LessOrEqual(t, stats.Peak, int64(budget+proxyhub.MaxTunnelMessage), "the proxied connections held more than the budget")
	assert.True(t, tunnel.Server.Connected("cluster1"), "the hub closed cluster1's tunnel rather than the slow connections")
	// Each slow reader, reading now, gets a broken answer.
	for i, resp := range slow {
		body, err := io.ReadAll(resp.Body)
		var got corev1.ConfigMapList
		complete := err == nil && json.Unmarshal(body, &got) == nil && len(got.Items) == configMaps
		assert.False(t, complete, "slow reader %d got its whole answer (%d bytes, %v)", i, len(body), err)
	}
	_, err = alice.CoreV1().ConfigMaps("big").List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
}

// openUnreadPath sends a GET of path as user through the hub to cluster
// and returns the response, whose body the caller reads later or not at
// all, or nil when there is none. Each request has a connection of its own
// (HTTP/1.1) with a small receive buffer: the buffers on the way, not
// the hub's, should be what fills last.
func openUnreadPath(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, user, cluster, path string) *http.Response {
	t.Helper()
	cfg := proxyConfig(t, hubCluster, cluster, user)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	require.NoError(t, err)
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		})
		return errors.Join(err, serr)
	}}
	rt, err := rest.HTTPWrappersForConfig(cfg, &http.Transport{
		TLSClientConfig: tlsConfig, DialContext: dialer.DialContext, DisableKeepAlives: true, DisableCompression: true,
	})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Logf("the request through %s's tunnel ended: %v", cluster, err)
		return nil
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}
