package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// writeVerbs are the apiserver_request_total verbs that change something:
// the metric names a create POST and an update PUT.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// observer reads the hub's processes and its API server's request counts,
// and gives the harness an admin client whose own requests it counts, so
// that they can be left out of the rates.
type observer struct {
	f   *benchkit.Fleet
	cfg *rest.Config
	// c is the harness's admin client of the hub; own counts its requests.
	c   client.WithWatch
	own atomic.Int64
	// simPid is the sim-agents process, 0 without one.
	simPid int
	// agentCluster, when set, is a cluster of a real agent whose process
	// is read as ProcAgent.
	agentCluster string
	// profileDir, when set, is where profileAPIServer writes the profiles.
	profileDir string
}

// newObserver returns the observer of f's hub.
func newObserver(b *testing.B, f *benchkit.Fleet) *observer {
	b.Helper()
	o := &observer{f: f, cfg: f.Hub.RESTConfig()}
	counted := f.Hub.RESTConfig()
	counted.QPS, counted.Burst = 100, 200
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			o.own.Add(1)
			return rt.RoundTrip(req)
		})
	})
	var err error
	if o.c, err = client.NewWithWatch(counted, client.Options{Scheme: apis.Scheme}); err != nil {
		b.Fatal(err)
	}
	return o
}

// roundTripperFunc is a function as an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// requestCounts is apiserver_request_total summed by "VERB
// resource[/subresource]".
type requestCounts map[string]float64

// requests scrapes the hub API server's request counts.
func (o *observer) requests(ctx context.Context) (requestCounts, error) {
	m, err := framework.ScrapeAPIServer(ctx, o.cfg)
	if err != nil {
		return nil, err
	}
	out := requestCounts{}
	m.Each("apiserver_request_total", func(l map[string]string, v float64) {
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += v
	})
	return out, nil
}

// window is an interval over which requests and CPU are counted.
type window struct {
	start time.Time
	reqs  requestCounts
	own   int64
	cpu   map[string]time.Duration
	pids  map[string]int
}

// pids returns the process IDs the harness reads, by Proc* name.
func (o *observer) pids() map[string]int {
	pids := map[string]int{
		ProcHubController: o.f.Pid("hub", config.HubNamespace, benchkit.HubController),
		ProcAPIServer:     o.f.Hub.APIServerPid(),
		ProcEtcd:          o.f.Env.EtcdPid(),
	}
	if o.simPid != 0 {
		pids[ProcSimAgents] = o.simPid
	}
	if o.agentCluster != "" {
		pids[ProcAgent] = o.f.Pid(o.agentCluster, config.AgentNamespace, benchkit.AgentDeployment)
	}
	return pids
}

// begin opens a window.
func (o *observer) begin(ctx context.Context, b *testing.B) *window {
	b.Helper()
	w := &window{start: time.Now(), own: o.own.Load(), cpu: map[string]time.Duration{}, pids: o.pids()}
	for name, pid := range w.pids {
		cpu, err := benchkit.ProcCPU(pid)
		if err != nil {
			b.Fatalf("CPU time of %s (pid %d): %v", name, pid, err)
		}
		w.cpu[name] = cpu
	}
	var err error
	if w.reqs, err = o.requests(ctx); err != nil {
		b.Fatal(err)
	}
	return w
}

// rates are the figures of a closed window.
type rates struct {
	seconds float64
	// perKey is the requests served during the window by key, the
	// harness's own included.
	perKey requestCounts
	// all and writes are per second, without the harness's own requests
	// (all of them counted as reads: the harness's writes during an
	// operation are few and are part of the operation).
	all, writes float64
	// cpu is each process's CPU over the window in cores; nil for a
	// process that restarted within it.
	cpu map[string]float64
}

// end closes w.
func (o *observer) end(ctx context.Context, b *testing.B, w *window) rates {
	b.Helper()
	now, err := o.requests(ctx)
	if err != nil {
		b.Fatal(err)
	}
	r := rates{seconds: time.Since(w.start).Seconds(), perKey: requestCounts{}, cpu: map[string]float64{}}
	own := float64(o.own.Load() - w.own)
	var all, writes float64
	for k, v := range now {
		d := v - w.reqs[k]
		if d <= 0 {
			continue
		}
		r.perKey[k] = d
		all += d
		if verb, _, _ := strings.Cut(k, " "); writeVerbs[verb] {
			writes += d
		}
	}
	r.all = max(0, all-own) / r.seconds
	r.writes = writes / r.seconds
	pids := o.pids()
	for name, pid := range w.pids {
		if pids[name] != pid {
			continue
		}
		cpu, err := benchkit.ProcCPU(pid)
		if err != nil {
			b.Fatalf("CPU time of %s (pid %d): %v", name, pid, err)
		}
		r.cpu[name] = (cpu - w.cpu[name]).Seconds() / r.seconds
	}
	return r
}

// perSecond returns r's per-key counts divided by its length.
func (r rates) perSecond() map[string]float64 {
	out := make(map[string]float64, len(r.perKey))
	for k, v := range r.perKey {
		out[k] = v / r.seconds
	}
	return out
}

// op turns r into an Op of the given length and detail.
func (r rates) op(took time.Duration, detail string) Op {
	return Op{Seconds: took.Seconds(), Detail: detail, RequestsPerSecond: r.all, WritesPerSecond: r.writes, Requests: r.perKey, CPUCores: r.cpu}
}

// memory reads the memory of the processes the harness watches.
func (o *observer) memory(b *testing.B) map[string]Process {
	b.Helper()
	out := map[string]Process{}
	for name, pid := range o.pids() {
		m, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatalf("memory of %s (pid %d): %v", name, pid, err)
		}
		out[name] = Process{RSSMiB: float64(m.RSS) / (1 << 20), PeakMiB: float64(m.HWM) / (1 << 20)}
	}
	return out
}

// machine describes this machine for the results.
func machine() string {
	load := "unknown"
	if data, err := readFile("/proc/loadavg"); err == nil && len(data) > 0 {
		load = data
	}
	return fmt.Sprintf("%d CPUs, %s/%s, load average at start %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, load)
}

// readFile returns the first line of a small file.
func readFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return line, nil
}

// profileAPIServer samples the CPU of the hub's API server for d in the
// background (benchkit's hubs serve /debug/pprof) and returns the function
// that waits for it: the profile is written to o.profileDir as name and
// summarized. The profile's one request is the harness's own, not counted
// apart: one in a window of d.
func (o *observer) profileAPIServer(ctx context.Context, d time.Duration, name string) (wait func() (*CPUProfile, error)) {
	type result struct {
		p   *CPUProfile
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := o.cpuProfile(ctx, d, name)
		done <- result{p, err}
	}()
	return func() (*CPUProfile, error) {
		r := <-done
		return r.p, r.err
	}
}

// cpuProfile takes the profile of profileAPIServer.
func (o *observer) cpuProfile(ctx context.Context, d time.Duration, name string) (*CPUProfile, error) {
	hc, err := rest.HTTPClientFor(o.cfg)
	if err != nil {
		return nil, err
	}
	seconds := max(1, int(d.Round(time.Second)/time.Second))
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(o.cfg.Host, "/"), seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("CPU profile of the hub's API server: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("CPU profile of the hub's API server: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("CPU profile of the hub's API server: %s: %s", resp.Status, tail(string(data), 200))
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(o.profileDir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	p, err := SummarizeCPUProfile(data, name)
	if err != nil {
		return nil, err
	}
	return &p, nil
}
