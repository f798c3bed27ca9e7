package tunnel

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

var (
	tunnelSteps = flag.String("tunnel-clusters", "100,1000", "BenchmarkTunnelIdle: the numbers of attached tunnels to measure at, ascending")
	idleWindow  = flag.Duration("tunnel-idle-window", 70*time.Second, "BenchmarkTunnelIdle: how long CPU and requests are measured with every tunnel idle; longer than a minute, so that it holds one re-authorization of every tunnel")
)

// attachConcurrency bounds the tunnels attaching at once.
const attachConcurrency = 50

// BenchmarkTunnelIdle attaches simulated clusters' tunnels to one hub in
// steps and measures, after each step, the hub tunnel's and the hub API
// server's resident memory and sockets, and their CPU over an idle window
// (the tunnels' only traffic then is the agents' pings, one every 5 s).
//
// The simulated agents attach exactly as the agent does (a remotedialer
// session over a WebSocket to managedclusters/<cluster>/attach through the
// hub's API server, authenticated by a client certificate of the cluster's
// agent identity), from this process. They answer no dials: the cost of a
// request through a tunnel is BenchmarkHubTunnel's (test/bench/nodes).
// Each simulated cluster has an accepted ManagedCluster, which the tunnel
// server requires. The hub's RBAC grants them attach through one
// ClusterRole for the group of every agent certificate as well as the
// per-cluster roles: the tunnel server's own check (the agent identity of
// the cluster it attaches) and its SubjectAccessReview run for every
// tunnel, at attach and again once a minute; the idle window counts those
// reviews.
func BenchmarkTunnelIdle(b *testing.B) {
	steps, err := parseSteps(*tunnelSteps)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		f := benchkit.StartFleet(b, config.HubOperatorValues{})
		ctx := b.Context()
		info := f.ServeTunnel(ctx, b)
		grantAttach(ctx, b, f)

		hubPid, apiPid := info.Pid, f.Hub.APIServerPid()
		reviews := func() float64 {
			m, err := framework.ScrapeAPIServer(ctx, f.Hub.RESTConfig())
			if err != nil {
				b.Fatal(err)
			}
			return m.Sum("apiserver_request_total", map[string]string{"verb": "POST", "resource": "subjectaccessreviews"})
		}
		reviews0 := reviews()
		before := sample(ctx, b, hubPid, apiPid, *idleWindow)
		idleReviews := reviews() - reviews0
		b.Logf("no tunnel: hub tunnel %s, %d sockets; API server %s, %d sockets",
			benchkit.MiB(before.hub.rss), before.hub.sockets, benchkit.MiB(before.api.rss), before.api.sockets)
		sims := &simAgents{hub: f.Hub, admin: f.HubClient}
		for _, n := range steps {
			start := time.Now()
			sims.attach(ctx, b, n)
			attached := time.Since(start)
			reviews0 := reviews()
			s := sample(ctx, b, hubPid, apiPid, *idleWindow)
			reviewRate := (reviews() - reviews0 - idleReviews) / idleWindow.Seconds()
			per := func(after, base uint64) string {
				return fmt.Sprintf("%.1f KiB", (float64(after)-float64(base))/float64(n)/1024)
			}
			label := fmt.Sprintf("%d tunnels", n)
			benchkit.Record(b, label+": attached in", benchkit.Seconds(attached), fmt.Sprintf("%d at a time", attachConcurrency))
			benchkit.Record(b, label+": hub tunnel memory", benchkit.MiB(s.hub.rss), per(s.hub.rss, before.hub.rss)+" per tunnel (RSS; "+benchkit.MiB(before.hub.rss)+" without)")
			benchkit.Record(b, label+": hub tunnel sockets", strconv.Itoa(s.hub.sockets), fmt.Sprintf("%+d", s.hub.sockets-before.hub.sockets))
			benchkit.Record(b, label+": hub tunnel idle CPU", fmt.Sprintf("%.1f %%", s.hub.cpu*100), fmt.Sprintf("of one core, over %s", *idleWindow))
			benchkit.Record(b, label+": API server memory", benchkit.MiB(s.api.rss), per(s.api.rss, before.api.rss)+" per tunnel (it proxies each)")
			benchkit.Record(b, label+": API server sockets", strconv.Itoa(s.api.sockets), fmt.Sprintf("%+d", s.api.sockets-before.api.sockets))
			benchkit.Record(b, label+": API server idle CPU", fmt.Sprintf("%.1f %%", s.api.cpu*100), fmt.Sprintf("%.1f %% without tunnels", before.api.cpu*100))
			benchkit.Record(b, label+": re-authorization", fmt.Sprintf("%.1f SubjectAccessReviews/s", reviewRate), fmt.Sprintf("over %s, beyond the %.1f/s without tunnels", *idleWindow, idleReviews/idleWindow.Seconds()))
		}
		b.ReportMetric(float64(sims.count()), "tunnels")
	}
}

// procSample is one process's figures.
type procSample struct {
	rss     uint64
	sockets int
	// cpu is the share of one core over the window.
	cpu float64
}

type samples struct{ hub, api procSample }

// sample measures both processes over window.
func sample(ctx context.Context, b *testing.B, hubPid, apiPid int, window time.Duration) samples {
	b.Helper()
	cpu0 := [2]time.Duration{procCPU(b, hubPid), procCPU(b, apiPid)}
	start := time.Now()
	select {
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	case <-time.After(window):
	}
	elapsed := time.Since(start)
	read := func(pid int, cpu0 time.Duration) procSample {
		mem, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		return procSample{rss: mem.RSS, sockets: sockets(b, pid), cpu: float64(procCPU(b, pid)-cpu0) / float64(elapsed)}
	}
	return samples{hub: read(hubPid, cpu0[0]), api: read(apiPid, cpu0[1])}
}

func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	d, err := benchkit.ProcCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// sockets counts pid's open sockets.
func sockets(b *testing.B, pid int) int {
	b.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// grantAttach lets every agent certificate attach any cluster's tunnel at
// the hub's RBAC; the tunnel server still admits only a cluster's own agent.
func grantAttach(ctx context.Context, b *testing.B, f *benchkit.Fleet) {
	b.Helper()
	const name = "bench-tunnel-attach"
	if err := f.HubClient.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{hubtunnel.Group},
			Resources: []string{hubtunnel.Resource + "/" + hubtunnel.AttachSubresource}, Verbs: []string{"get"}}},
	}); err != nil {
		b.Fatal(err)
	}
	if err := f.HubClient.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.ManagedClustersGroup}},
	}); err != nil {
		b.Fatal(err)
	}
}

// simAgents are the simulated clusters' ends of their tunnels.
type simAgents struct {
	hub       *framework.Cluster
	admin     client.Client
	attached  atomic.Int64
	started   int
	mu        sync.Mutex
	lastError string
}

func (s *simAgents) count() int64 { return s.attached.Load() }

// attach starts simulated agents until n are running and waits until all
// are attached.
func (s *simAgents) attach(ctx context.Context, b *testing.B, n int) {
	b.Helper()
	sem := make(chan struct{}, attachConcurrency)
	for ; s.started < n; s.started++ {
		cluster := fmt.Sprintf("tunnel-%05d", s.started)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := s.admin.Create(ctx, mc); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatalf("create ManagedCluster %s: %v", cluster, err)
		}
		cfg, err := s.hub.ConfigForUser(identity.AgentUserName(cluster, "sim"), identity.ClusterGroup(cluster), identity.ManagedClustersGroup)
		if err != nil {
			b.Fatal(err)
		}
		sem <- struct{}{}
		go s.run(ctx, cfg, cluster, sem)
	}
	logged := ""
	benchkit.Poll(ctx, b, benchkit.FastPoll, 5*time.Minute, fmt.Sprintf("%d tunnels attached", n), func(context.Context) (bool, error) {
		s.mu.Lock()
		last := s.lastError
		s.mu.Unlock()
		if last != logged {
			b.Logf("a simulated agent failed to attach: %s", last)
			logged = last
		}
		return s.attached.Load() >= int64(n), nil
	})
}

// run keeps cluster's tunnel attached until ctx ends; it releases sem once
// the first attempt is over.
func (s *simAgents) run(ctx context.Context, cfg *rest.Config, cluster string, sem chan struct{}) {
	released := false
	release := func() {
		if !released {
			released = true
			<-sem
		}
	}
	defer release()
	url, err := proxyagent.AttachURL(cfg.Host, cluster)
	if err != nil {
		s.fail(err)
		return
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		s.fail(err)
		return
	}
	dialer := &websocket.Dialer{TLSClientConfig: tlsConfig, HandshakeTimeout: 30 * time.Second}
	deny := func(string, string) bool { return false }
	counted := false
	for ctx.Err() == nil {
		err := remotedialer.ConnectToProxyWithDialer(ctx, url, nil, deny, dialer, nil, func(context.Context, *remotedialer.Session) error {
			if !counted {
				counted = true
				s.attached.Add(1)
			}
			release()
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		s.fail(err)
		release()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *simAgents) fail(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	s.lastError = err.Error()
	s.mu.Unlock()
}

// parseSteps reads a comma-separated ascending list of positive numbers.
func parseSteps(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-tunnel-clusters %q: want ascending positive numbers, such as 100,1000", v)
		}
		out = append(out, n)
	}
	return out, nil
}
