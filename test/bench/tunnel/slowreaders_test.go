package tunnel

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var (
	slowReaders   = flag.Int("slow-readers", 200, "BenchmarkTunnelSlowReaders: proxied requests through one tunnel whose answers are never read")
	slowAnswerMiB = flag.Int("slow-answer-mib", 64, "BenchmarkTunnelSlowReaders: MiB each answer streams, more than the buffers on the way hold")
	slowWindow    = flag.Duration("slow-window", 30*time.Second, "BenchmarkTunnelSlowReaders: how long the hub tunnel's memory is sampled once every slow request has its answer's headers")
	deletions     = flag.Int("tunnel-deletions", 10, "BenchmarkTunnelSlowReaders: clusters deleted one at a time, each with its tunnel attached, to time its closing")
)

// BenchmarkTunnelSlowReaders measures what the hub tunnel holds when a
// hub user opens many proxied requests through one cluster's tunnel and
// reads none of their answers, with the shipped buffer budget and write
// timeout and again without them (a budget of 1 TiB, a write timeout of an
// hour), each on a fleet of its own. The cluster's end of the tunnel is
// simulated in this process as the agent's is (a remotedialer session,
// honoring the hub's Pause), and answers every proxied request with a
// stream of random bytes. Printed: the hub tunnel's peak RSS (VmHWM)
// and Go heap against its memory limit, the peak of
// ocm_hub_tunnel_buffered_bytes against the budget, the connections closed,
// and a request that reads its whole answer through the same tunnel
// meanwhile. With the budget it also times a cluster's deletion to its
// tunnel's closing.
func BenchmarkTunnelSlowReaders(b *testing.B) {
	for range b.N {
		b.Run("budget", func(b *testing.B) { slowReadersRun(b, nil, true) })
		b.Run("no budget", func(b *testing.B) {
			slowReadersRun(b, []string{"--proxy-buffer-budget=1Ti", "--proxy-write-timeout=1h"}, false)
		})
	}
}

func slowReadersRun(b *testing.B, hubArgs []string, timeDeletion bool) {
	f := benchkit.StartFleetWith(b, benchkit.FleetOptions{RunnerArgs: map[string][]string{config.HubTunnelDeployment: hubArgs}})
	ctx := b.Context()
	info := f.ServeTunnel(ctx, b)
	grantAttach(ctx, b, f)
	metricsAddr := benchkit.FlagValue(info.Args, "--metrics-bind-address")
	hubMetrics := func() framework.Metrics {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}
		m, err := framework.ScrapeMetrics(ctx, hc, "http://"+metricsAddr+"/metrics")
		if err != nil {
			b.Fatal(err)
		}
		return m
	}

	stream := startStreamServer(b, int64(*slowAnswerMiB)<<20)
	const cluster = "slow-readers"
	attachStreaming(ctx, b, f, cluster, stream)
	const user = "reader"
	grantProxy(ctx, b, f, user, cluster)
	cfg, err := f.Hub.ConfigForUser(user)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Host = f.Hub.Server() + hubtunnel.ProxyPath(cluster)
	benchkit.Poll(ctx, b, benchkit.FastPoll, time.Minute, cluster+" answering through the hub", func(ctx context.Context) (bool, error) {
		resp, err := get(ctx, cfg, "/small")
		if err != nil {
			return false, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})

	before, err := benchkit.ReadProcMemory(info.Pid)
	if err != nil {
		b.Fatal(err)
	}
	budget := hubMetrics().Sum("ocm_hub_tunnel_buffer_budget_bytes", nil)
	var open []*http.Response
	failed, lastErr := 0, error(nil)
	for range *slowReaders {
		resp, err := get(ctx, cfg, "/stream")
		if err != nil {
			failed, lastErr = failed+1, err
			continue
		}
		open = append(open, resp)
	}
	if failed > 0 {
		b.Logf("%d of %d slow requests failed, the last with: %v", failed, *slowReaders, lastErr)
	}
	defer func() {
		for _, r := range open {
			_ = r.Body.Close()
		}
	}()
	// Sample while the answers fill every buffer on the way.
	var peakHeld, peakHeap float64
	deadline := time.Now().Add(*slowWindow)
	for time.Now().Before(deadline) {
		m := hubMetrics()
		peakHeld = max(peakHeld, m.Sum("ocm_hub_tunnel_buffered_bytes", nil))
		peakHeap = max(peakHeap, m.Sum("go_memstats_heap_inuse_bytes", nil))
		select {
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	// A client that reads, meanwhile, through the same tunnel.
	start := time.Now()
	resp, err := get(ctx, cfg, "/stream")
	var read int64
	if err == nil {
		read, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	took := time.Since(start)
	after, err2 := benchkit.ReadProcMemory(info.Pid)
	if err2 != nil {
		b.Fatal(err2)
	}
	m := hubMetrics()
	closed := func(reason string) string {
		return strconv.Itoa(int(m.Sum("ocm_hub_proxy_connections_closed_total", map[string]string{"reason": reason})))
	}
	limit := uint64(proxyhub.DefaultMemoryLimit)
	label := fmt.Sprintf("%d slow readers", *slowReaders)
	benchkit.Record(b, label+": hub tunnel peak RSS", benchkit.MiB(after.HWM),
		fmt.Sprintf("%.0f %% of the shipped limit of %s; %s before the requests", 100*float64(after.HWM)/float64(limit), benchkit.MiB(limit), benchkit.MiB(before.RSS)))
	benchkit.Record(b, label+": hub tunnel peak Go heap in use", benchkit.MiB(uint64(peakHeap)), fmt.Sprintf("sampled every 250 ms over %s", *slowWindow))
	benchkit.Record(b, label+": peak held in the tunnel's buffers", benchkit.MiB(uint64(peakHeld)), "budget "+benchkit.MiB(uint64(budget))+" (ocm_hub_tunnel_buffered_bytes, sampled)")
	benchkit.Record(b, label+": connections closed", closed("buffer-budget")+" over the budget, "+closed("write-timeout")+" after the write timeout", "")
	if err != nil {
		benchkit.Record(b, label+": a reading client's answer", "failed after "+benchkit.Seconds(took), err.Error())
	} else {
		benchkit.Record(b, label+": a reading client's answer", fmt.Sprintf("%s in %s", benchkit.MiB(uint64(read)), benchkit.Seconds(took)), "through the same tunnel")
	}
	if timeDeletion && *deletions > 0 {
		timeDeletions(ctx, b, f)
	}
}

// get sends a GET of path as cfg's user on a connection of its own
// (HTTP/1.1, uncompressed) whose receive buffer is small, so that the
// buffers on the way fill before the tunnel's.
func get(ctx context.Context, cfg *rest.Config, path string) (*http.Response, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
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
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return resp, nil
}

// startStreamServer serves, on a loopback port, /stream: size random bytes,
// and anything else: a short answer. It returns its address.
func startStreamServer(b *testing.B, size int64) string {
	b.Helper()
	chunk := make([]byte, 32<<10)
	_, _ = rand.Read(chunk)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.URL.Path != "/stream" {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for sent := int64(0); sent < size; {
			n, err := w.Write(chunk[:min(int64(len(chunk)), size-sent)])
			if err != nil {
				return
			}
			sent += int64(n)
		}
	})}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// attachStreaming accepts cluster and attaches its tunnel from this
// process, answering every dial with a connection to target, and waits
// until the hub has it.
func attachStreaming(ctx context.Context, b *testing.B, f *benchkit.Fleet, cluster, target string) <-chan time.Time {
	b.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	if err := f.HubClient.Create(ctx, mc); err != nil {
		b.Fatalf("create ManagedCluster %s: %v", cluster, err)
	}
	cfg, err := f.Hub.ConfigForUser(identity.AgentUserName(cluster, "sim"), identity.ClusterGroup(cluster), identity.ManagedClustersGroup)
	if err != nil {
		b.Fatal(err)
	}
	url, err := proxyagent.AttachURL(cfg.Host, cluster)
	if err != nil {
		b.Fatal(err)
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	dialer := &websocket.Dialer{TLSClientConfig: tlsConfig, HandshakeTimeout: 30 * time.Second}
	allow := func(proto, address string) bool { return proto == "tcp" && address == hubtunnel.AgentAddress }
	local := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", target)
	}
	attached := make(chan struct{})
	ended := make(chan time.Time, 1)
	var once sync.Once
	go func() {
		for ctx.Err() == nil {
			counted := false
			err := remotedialer.ConnectToProxyWithDialer(ctx, url, nil, allow, dialer, local, func(context.Context, *remotedialer.Session) error {
				counted = true
				once.Do(func() { close(attached) })
				return nil
			})
			if counted {
				// The hub closed the tunnel (or the run ended).
				ended <- time.Now()
				return
			}
			if err != nil && ctx.Err() == nil {
				b.Logf("%s's tunnel failed to attach: %v", cluster, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	select {
	case <-attached:
	case <-time.After(2 * time.Minute):
		b.Fatalf("%s's tunnel did not attach", cluster)
	}
	return ended
}

// grantProxy lets user proxy to cluster.
func grantProxy(ctx context.Context, b *testing.B, f *benchkit.Fleet, user, cluster string) {
	b.Helper()
	name := user + "-proxy-" + cluster
	if err := f.HubClient.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{hubtunnel.Group}, Resources: []string{hubtunnel.Resource + "/" + hubtunnel.ProxySubresource},
			ResourceNames: []string{cluster}, Verbs: []string{"get"}}},
	}); err != nil {
		b.Fatal(err)
	}
	if err := f.HubClient.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}); err != nil {
		b.Fatal(err)
	}
}

// timeDeletions attaches a tunnel for each of -tunnel-deletions clusters
// and deletes the clusters one at a time, timing each deletion to the end
// of its tunnel as the cluster's end sees it.
func timeDeletions(ctx context.Context, b *testing.B, f *benchkit.Fleet) {
	b.Helper()
	var times []float64
	for i := range *deletions {
		cluster := fmt.Sprintf("deleted-%02d", i)
		ended := attachStreaming(ctx, b, f, cluster, "127.0.0.1:1")
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
		start := time.Now()
		if err := f.HubClient.Delete(ctx, mc); err != nil {
			b.Fatalf("delete ManagedCluster %s: %v", cluster, err)
		}
		select {
		case end := <-ended:
			times = append(times, end.Sub(start).Seconds())
		case <-time.After(2 * time.Minute):
			b.Fatalf("%s's tunnel stayed open 2 minutes after its deletion", cluster)
		}
	}
	benchkit.Record(b, "ManagedCluster deleted → its tunnel closed", fmt.Sprintf("p50 %.0f ms, max %.0f ms", 1000*benchkit.Quantile(times, 0.5), 1000*benchkit.Quantile(times, 1)),
		fmt.Sprintf("%d clusters, from the delete request to the end of the session at the cluster's end", len(times)))
}
