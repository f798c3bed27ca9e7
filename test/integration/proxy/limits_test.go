package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestTunnelLimits attacks the hub tunnel as a compromised managed cluster
// (cluster3, whose agent identity the attacker holds) and as hub users, and
// checks that the hub controller bounds what they hold of it and closes a
// denied cluster's tunnel.
func TestTunnelLimits(t *testing.T) {
	ctx, env := hubtest.Start(t, 10*time.Minute, "cluster1", "cluster2")
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	hubtest.RunControllers(t, hubCluster, 0, func(mgr ctrl.Manager) error { return hub.SetupWithManager(mgr, hub.Options{}) })
	hubtest.AcceptClusters(ctx, t, admin, "cluster1", "cluster2", "cluster3")
	tunnel := hubtest.StartTunnelWithLimits(ctx, t, hubCluster, "", proxyhub.Limits{ConnectionsPerCluster: 3, ConnectionsPerUser: 2})
	agenttest.StartTunnelAgent(ctx, t, env, "cluster1")
	agenttest.StartTunnelAgent(ctx, t, env, "cluster2")
	for _, user := range []string{"alice", "carol", "dave"} {
		grantProxy(ctx, t, admin, user, "cluster1")
	}
	grantProxy(ctx, t, admin, "alice", "cluster2")
	grantProxy(ctx, t, admin, "alice", "cluster3")
	alice := proxyClient(t, hubCluster, "cluster1", "alice")
	waitConnected(ctx, t, alice, "cluster1")
	waitConnected(ctx, t, proxyClient(t, hubCluster, "cluster2", "alice"), "cluster2")
	attacker := agenttest.AgentConfig(t, hubCluster, "cluster3", "evil")
	for _, cluster := range []string{"cluster1", "cluster2"} {
		bind(ctx, t, env.Cluster(cluster).Client(), "default", "view",
			rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ocm:hub:system:authenticated"})
	}

	t.Run("a 64 MiB tunnel message closes the sender's tunnel only", func(t *testing.T) {
		conn := attachRaw(ctx, t, hubCluster, attacker, "cluster3")
		peak := watchHeap(t)
		sent, err := framework.SendHugeTunnelMessage(conn, 64<<20)
		require.Error(t, err, "the hub read the whole 64 MiB message")
		grew := peak()
		t.Logf("the hub closed the tunnel after the attacker wrote %s; the process's heap grew by at most %s", mib(sent), mib(grew))
		assert.Less(t, grew, int64(32<<20), "heap growth while the message was sent")
		waitNotConnected(ctx, t, tunnel, "cluster3")
		// The other clusters' tunnels and the hub's controllers carry on.
		_, err = alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.True(t, tunnel.Server.Connected("cluster2"))
	})

	t.Run("an agent that ignores Pause loses its tunnel", func(t *testing.T) {
		conn := attachRaw(ctx, t, hubCluster, attacker, "cluster3")
		framework.Eventually(ctx, t, pollTimeout, "cluster3's tunnel attached", func(ctx context.Context) (bool, error) {
			return tunnel.Server.Connected("cluster3"), nil
		})
		// alice asks cluster3 for something and reads nothing of the
		// answer, so the hub pauses the connection.
		connected := make(chan int64, 1)
		go func() {
			for {
				_, r, err := conn.NextReader()
				if err != nil {
					return
				}
				header := make([]byte, 40)
				n, _ := io.ReadFull(r, header)
				connID, typ := framework.ReadTunnelMessageHeader(header[:n])
				if typ == hubtunnel.MessageConnect {
					connected <- connID
				}
			}
		}()
		responses := make(chan *http.Response, 1)
		go func() { responses <- openUnread(ctx, t, hubCluster, "alice", "cluster3") }()
		defer func() {
			if resp := <-responses; resp != nil {
				_ = resp.Body.Close()
			}
		}()
		var connID int64
		select {
		case connID = <-connected:
		case <-ctx.Done():
			t.Fatal("the hub never dialed cluster3")
		}
		peak := watchHeap(t)
		answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
		require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, append(hubtunnel.MessageHeader(2, connID, hubtunnel.MessageData), answer...)))
		chunk := append(hubtunnel.MessageHeader(3, connID, hubtunnel.MessageData), make([]byte, 8<<10)...)
		var sent int64
		var err error
		for sent < 256<<20 {
			if err = conn.WriteMessage(websocket.BinaryMessage, chunk); err != nil {
				break
			}
			sent += int64(len(chunk))
		}
		require.Error(t, err, "the hub took 256 MiB for a connection nobody reads")
		grew := peak()
		t.Logf("the hub closed the tunnel after the attacker flooded %s; the process's heap grew by at most %s", mib(sent), mib(grew))
		// The paused connection's buffer holds what came before the
		// Pause and the budget after it (34 MiB), in a buffer that grows
		// by doubling and leaves its old arrays to the collector; without
		// the budget it holds the whole 256 MiB flood.
		assert.Less(t, grew, int64(192<<20), "heap growth during the flood")
		waitNotConnected(ctx, t, tunnel, "cluster3")
		_, err = alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
	})

	t.Run("proxied connections are limited per user and per cluster", func(t *testing.T) {
		carol := proxyClient(t, hubCluster, "cluster1", "carol")
		dave := proxyClient(t, hubCluster, "cluster1", "dave")
		w1 := openWatch(ctx, t, dave)
		w2 := openWatch(ctx, t, dave)
		_, err := dave.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsTooManyRequests(err), "dave's third connection: %v", err)
		assert.ErrorContains(t, err, `user "dave" has 2 proxied connections open`)
		assert.ErrorContains(t, err, "--proxy-max-connections-per-user")
		w3 := openWatch(ctx, t, carol)
		_, err = carol.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsTooManyRequests(err), "cluster1's fourth connection: %v", err)
		assert.ErrorContains(t, err, "cluster cluster1 has 3 proxied connections open")
		// cluster2 has its own count.
		_, err = proxyClient(t, hubCluster, "cluster2", "carol").CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsForbidden(err), "carol may not proxy to cluster2: %v", err)
		for _, w := range []watch.Interface{w1, w2, w3} {
			w.Stop()
		}
		framework.Eventually(ctx, t, pollTimeout, "dave's and carol's connections released", func(ctx context.Context) (bool, error) {
			_, err1 := dave.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			_, err2 := carol.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			return err1 == nil && err2 == nil, nil
		})
	})

	t.Run("denying a cluster closes its tunnel and its requests get 503", func(t *testing.T) {
		alice2 := proxyClient(t, hubCluster, "cluster2", "alice")
		waitConnected(ctx, t, alice2, "cluster2")
		mc := &clusterv1.ManagedCluster{}
		require.NoError(t, admin.Get(ctx, client.ObjectKey{Name: "cluster2"}, mc))
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Spec.HubAcceptsClient = false
		denied := time.Now()
		require.NoError(t, admin.Patch(ctx, mc, patch))
		waitNotConnected(ctx, t, tunnel, "cluster2")
		t.Logf("cluster2's tunnel closed %s after the deny was written", time.Since(denied).Round(time.Millisecond))
		_, err := alice2.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
		// Its agent cannot attach again: the hub's API server refuses it
		// once the hub controller removed its RBAC, and the tunnel
		// server before that.
		status, body := attach(t, hubCluster, agenttest.AgentConfig(t, hubCluster, "cluster2", "agent1"), "cluster2")
		assert.Equal(t, http.StatusForbidden, status, body)
	})
}

// attachRaw attaches cluster's tunnel as cfg's user and returns the
// WebSocket, which the test then speaks the tunnel protocol on itself.
func attachRaw(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, cfg *rest.Config, cluster string) *websocket.Conn {
	t.Helper()
	url, err := proxyagent.AttachURL(hubCluster.Server(), cluster)
	require.NoError(t, err)
	var conn *websocket.Conn
	framework.Eventually(ctx, t, pollTimeout, cluster+"'s tunnel attaching", func(ctx context.Context) (bool, error) {
		conn, err = framework.AttachTunnelAs(ctx, cfg, url)
		return err == nil, nil
	})
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// watchHeap samples this process's heap, where the hub's tunnel server
// runs, until the returned function is called, which returns the largest
// growth over the heap at the start.
func watchHeap(t *testing.T) func() int64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if grew := int64(ms.HeapInuse) - base; grew > peak.Load() {
				peak.Store(grew)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// waitNotConnected waits until cluster's tunnel no longer ends at the hub.
func waitNotConnected(ctx context.Context, t *testing.T, tunnel *hubtest.Tunnel, cluster string) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, cluster+"'s tunnel closed", func(ctx context.Context) (bool, error) {
		return !tunnel.Server.Connected(cluster), nil
	})
}

// openWatch starts a watch through c.
func openWatch(ctx context.Context, t *testing.T, c kubernetes.Interface) watch.Interface {
	t.Helper()
	w, err := c.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

// openUnread sends a GET as user through the hub to cluster and returns the
// response, whose body the caller does not read, or nil when there is none.
func openUnread(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, user, cluster string) *http.Response {
	cfg := proxyConfig(t, hubCluster, cluster, user)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Errorf("transport for %s: %v", user, err)
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/logs", nil)
	if err != nil {
		t.Errorf("request: %v", err)
		return nil
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Logf("the request through cluster3's tunnel ended: %v", err)
		return nil
	}
	return resp
}
