package work

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/payloadgen"
)

// Knobs of BenchmarkSetLargePayload.
var setClusters = flag.Int("set-clusters", 100, "BenchmarkSetLargePayload: clusters the ManifestWorkReplicaSet places its payload on: the -clusters real ones, the rest simulated")

const (
	// setNamespace holds the set, its Placement and its chunks.
	setNamespace = "bench-set"
	// setName names the set, and so its work in every cluster.
	setName = "bench-large-set"
	// setPlacement decides every cluster of the global set.
	setPlacement = "all"
	// fetcherAgentID is the agent ID of the simulated clusters' agent
	// identities.
	fetcherAgentID = "bench"
	// deliveryTimeout bounds the delivery to every cluster.
	deliveryTimeout = 20 * time.Minute
)

// BenchmarkSetLargePayload places one ManifestWorkReplicaSet of a
// generated -payload-mib payload on -set-clusters clusters: the -clusters
// real ones, whose agents (the shipped binary, run by the component runner)
// apply it, and simulated ones, accepted ManagedClusters with no agent
// process, whose "agents" are fetchers in this process: each, with a client
// certificate of its cluster's agent identity, watches its cluster
// namespace for the set's work, then reads every chunk the work lists as
// the agent does (its own namespace first, then the hub tunnel's server,
// one chunk at a time) and checks each against its digest. The hub
// controller and the hub tunnel are the shipped binary, run by the
// component runner. It records the hub's storage against the payload's
// size (the set's chunks, its works, the set and its revisions, as the API
// server returns them) before the payload, after its chunks are written,
// once every cluster's work is written and once every work holds the
// status a real agent reported; the times from the set's creation to every
// work written, every fetcher done and every real agent Applied; and the
// CPU time and peak memory of the hub's processes meanwhile.
func BenchmarkSetLargePayload(b *testing.B) {
	if *setClusters < 1 {
		b.Fatalf("-set-clusters %d: at least 1", *setClusters)
	}
	wf := startWorkFleet(b)
	ctx, cancel := context.WithCancel(b.Context())
	b.Cleanup(cancel)
	tunnel := wf.ServeTunnel(ctx, b)
	agents := wf.clusters[:min(len(wf.clusters), *setClusters)]
	if len(agents) < len(wf.clusters) {
		wf.labelClusters(ctx, b, agents)
	}
	sims := make([]string, *setClusters-len(agents))
	for i := range sims {
		sims[i] = fmt.Sprintf("fleet-%04d", i+1)
	}
	start := time.Now()
	wf.acceptClusters(ctx, b, sims)
	b.Logf("%d simulated clusters accepted in %s", len(sims), benchkit.Seconds(time.Since(start)))
	wf.placeEverywhere(ctx, b, len(agents) < len(wf.clusters), len(agents)+len(sims))

	manifests := payloadgen.Generate(payloadgen.Options{MiB: *payloadMiB, Namespace: workNamespace}).Manifests
	ref, chunks, err := payload.Split(setName, manifests)
	if err != nil {
		b.Fatal(err)
	}
	refManifest, err := payload.Manifest(ref)
	if err != nil {
		b.Fatal(err)
	}
	size := ref.Spec.Size
	b.Logf("payload: %d manifests, %s in %d chunks; %d clusters: %v with real agents, %d simulated",
		ref.Spec.Manifests, benchkit.MiB(uint64(size)), len(chunks), len(agents)+len(sims), agents, len(sims))

	storage := []storageReading{wf.setStorage(ctx, b, "before the payload")}
	start = time.Now()
	written, err := payload.Write(ctx, wf.HubClient, setNamespace, chunks)
	if err != nil {
		b.Fatal(err)
	}
	benchkit.Record(b, "chunks written once, to the set's namespace", benchkit.Seconds(time.Since(start)),
		fmt.Sprintf("%d chunks, %s compressed", written.Chunks, benchkit.MiB(uint64(written.StoredBytes))))
	storage = append(storage, wf.setStorage(ctx, b, "chunks written"))

	fleet := startFetchers(ctx, b, wf, sims)
	times := &deliveryTimes{written: map[string]time.Time{}, applied: map[string]time.Time{}}
	wf.watchWorksLabeled(ctx, b, workv1alpha1.OwnerLabels(setNamespace, setName), func(at time.Time, w *workv1.ManifestWork) {
		times.observe(at, w, slices.Contains(agents, w.Namespace))
	})
	procs := wf.hubProcesses(b, tunnel.Pid)
	before := procs.read(b, true)
	served0 := chunkBytesServed(ctx, b, wf)

	set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: setName},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: setPlacement}}}}
	set.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{refManifest}
	created := time.Now()
	if err := wf.HubClient.Create(ctx, set); err != nil {
		b.Fatal(err)
	}
	n := len(agents) + len(sims)
	allWritten := benchkit.Poll(ctx, b, benchkit.FastPoll, deliveryTimeout, fmt.Sprintf("the set's work written in %d cluster namespaces", n), func(context.Context) (bool, error) {
		return times.count() == n, nil
	})
	storage = append(storage, wf.setStorage(ctx, b, "every cluster's work written"))
	benchkit.Poll(ctx, b, benchkit.SlowPoll, deliveryTimeout, fmt.Sprintf("%d fetchers done and %d real agents Applied", len(sims), len(agents)), func(context.Context) (bool, error) {
		if err := fleet.failed(); err != nil {
			b.Fatal(err)
		}
		return fleet.finished() == len(sims) && times.appliedCount() == len(agents), nil
	})
	after := procs.read(b, false)
	served := chunkBytesServed(ctx, b, wf) - served0

	benchkit.Record(b, fmt.Sprintf("set created → its work written in every cluster namespace (%d)", n), benchkit.Seconds(allWritten.Sub(created)),
		"written by the hub controller once it verified every chunk in the set's namespace")
	if len(sims) > 0 {
		done := fleet.doneTimes()
		since := make([]float64, len(done))
		for i, d := range done {
			since[i] = d.Sub(created).Seconds()
		}
		benchkit.Record(b, fmt.Sprintf("set created → simulated clusters with every chunk verified: first / p50 / every one (%d)", len(sims)),
			fmt.Sprintf("%.2f / %.2f / %.2f s", slices.Min(since), benchkit.Quantile(since, 0.5), slices.Max(since)), "each reads its work's chunks one at a time through the hub tunnel")
		fetch := fleet.fetchTimes()
		benchkit.Record(b, "one simulated cluster's fetch, from its work's arrival: p50 / p90 / max", fmt.Sprintf("%.2f / %.2f / %.2f s",
			benchkit.Quantile(fetch, 0.5), benchkit.Quantile(fetch, 0.9), slices.Max(fetch)), fmt.Sprintf("%d chunks each", len(chunks)))
		benchkit.Record(b, "simulated clusters: chunk requests through the tunnel, retried", fmt.Sprintf("%d, %d", fleet.requests.Load(), fleet.retries.Load()),
			fleet.lastRetry())
	}
	for _, c := range agents {
		benchkit.Record(b, fmt.Sprintf("set created → %s (real agent) Applied", c), benchkit.Seconds(times.appliedAt(c).Sub(created)),
			"PayloadStaged True; read through the tunnel, verified, applied")
	}
	procs.record(b, before, after)
	benchkit.Record(b, "chunk bytes served", fmt.Sprintf("%s to the simulated clusters; %s of ManifestChunk GETs from the hub's API server",
		benchkit.MiB(uint64(fleet.bytes.Load())), benchkit.MiB(uint64(served))),
		"answers as JSON; the API server's include the tunnel's reads for the real agents and the hub controller's check of the chunks")

	// Every work as its cluster's agent reports it: the simulated clusters'
	// works get the status the first real agent wrote.
	if len(agents) > 0 && len(sims) > 0 {
		fleet.reportStatus(ctx, b, wf, agents[0])
		storage = append(storage, wf.setStorage(ctx, b, "every work with "+agents[0]+"'s status"))
	}
	recordStorage(b, storage, size, n)
	b.ReportMetric(0, "ns/op")
}

// labelClusters labels the real clusters the set places on, when it
// places on fewer than every real cluster.
func (wf *workFleet) labelClusters(ctx context.Context, b *testing.B, clusters []string) {
	b.Helper()
	for _, c := range clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := wf.HubClient.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
			b.Fatal(err)
		}
		if err := benchkit.Update(ctx, wf.HubClient, mc, func() {
			if mc.Labels == nil {
				mc.Labels = map[string]string{}
			}
			mc.Labels[setLabel] = "true"
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// setLabel marks the clusters the set's Placement selects when it selects
// not every cluster.
const setLabel = "bench.ocm.io/set"

// acceptClusters creates the ManagedClusters of clusters, accepted, as the
// hub admin, and waits until the hub has accepted each (its namespace and
// its agent's RBAC are there). No agent runs for them.
func (wf *workFleet) acceptClusters(ctx context.Context, b *testing.B, clusters []string) {
	b.Helper()
	err := runConcurrently(len(clusters), benchkit.SimConcurrency, func(i int) error {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusters[i], Labels: map[string]string{setLabel: "true"}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		return wf.HubClient.Create(ctx, mc)
	})
	if err != nil {
		b.Fatal(err)
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("the hub to accept %d clusters", len(clusters)), func(ctx context.Context) (bool, error) {
		list := &clusterv1.ManagedClusterList{}
		if err := wf.HubClient.List(ctx, list, client.MatchingLabels{setLabel: "true"}); err != nil {
			return false, err
		}
		accepted := 0
		for i := range list.Items {
			if slices.Contains(clusters, list.Items[i].Name) &&
				meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
				accepted++
			}
		}
		return accepted >= len(clusters), nil
	})
}

// placeEverywhere creates setNamespace with the global set bound to it and
// Placement setPlacement, which decides every cluster (or, with labeled,
// those labeled setLabel), tolerating the taints of the clusters that no
// agent ever joined; it waits until the Placement decides n clusters.
func (wf *workFleet) placeEverywhere(ctx context.Context, b *testing.B, labeled bool, n int) {
	b.Helper()
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: setPlacement},
		Spec: clusterv1beta1.PlacementSpec{Tolerations: []clusterv1beta1.Toleration{
			{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
			{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists},
		}}}
	if labeled {
		p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{setLabel: "true"}}}}}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: setNamespace}},
		&clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: setNamespace, Name: clusterv1beta2.GlobalClusterSetName},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterv1beta2.GlobalClusterSetName},
		},
		p,
	} {
		if err := wf.HubClient.Create(ctx, obj); err != nil {
			b.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 5*time.Minute, fmt.Sprintf("Placement %s to decide %d clusters", setPlacement, n), func(ctx context.Context) (bool, error) {
		decisions := &clusterv1beta1.PlacementDecisionList{}
		if err := wf.HubClient.List(ctx, decisions, client.InNamespace(setNamespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: setPlacement}); err != nil {
			return false, err
		}
		got := 0
		for i := range decisions.Items {
			got += len(decisions.Items[i].Status.Decisions)
		}
		return got == n, nil
	})
}

// deliveryTimes are what the hub watch of the set's works saw: when each
// cluster's work was first written and when each real cluster's was
// Applied with its payload staged.
type deliveryTimes struct {
	mu      sync.Mutex
	written map[string]time.Time
	applied map[string]time.Time
}

func (d *deliveryTimes) observe(at time.Time, w *workv1.ManifestWork, hasAgent bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.written[w.Namespace]; !ok {
		d.written[w.Namespace] = at
	}
	if _, ok := d.applied[w.Namespace]; ok || !hasAgent || !applied(w) {
		return
	}
	if staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged); staged != nil &&
		staged.Status == metav1.ConditionTrue && staged.ObservedGeneration == w.Generation {
		d.applied[w.Namespace] = at
	}
}

func (d *deliveryTimes) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.written)
}

func (d *deliveryTimes) appliedCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.applied)
}

func (d *deliveryTimes) appliedAt(cluster string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.applied[cluster]
}

// fetchers are the simulated clusters' agents, each reading its work's
// chunks through the hub tunnel.
type fetchers struct {
	list []*fetcher
	// bytes are the answers' bytes read, requests the chunk requests
	// sent to the tunnel, retries those that failed and were sent again.
	bytes, requests, retries atomic.Int64

	mu        sync.Mutex
	err       error
	lastError string
}

// fetcher is one simulated cluster's agent.
type fetcher struct {
	cluster string
	// hub is a client of the hub as the cluster's agent identity.
	hub    client.WithWatch
	chunks *hubtunnel.ChunkClient
	// seen is when its work arrived in its watch, done when every chunk
	// was verified; zero until then.
	seen, done atomic.Pointer[time.Time]
}

// startFetchers starts a fetcher for each of clusters, with a client
// certificate of the cluster's agent identity, and returns once each
// watches its cluster namespace.
func startFetchers(ctx context.Context, b *testing.B, wf *workFleet, clusters []string) *fetchers {
	b.Helper()
	fs := &fetchers{}
	for _, c := range clusters {
		cfg, err := wf.Hub.ConfigForUser(identity.AgentUserName(c, fetcherAgentID), identity.AgentGroups(c)...)
		if err != nil {
			b.Fatal(err)
		}
		hub, err := client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme, Mapper: wf.HubClient.RESTMapper()})
		if err != nil {
			b.Fatal(err)
		}
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		counted := &http.Client{Transport: countingTransport{base: hc.Transport, n: &fs.bytes}, Timeout: hc.Timeout}
		f := &fetcher{cluster: c, hub: hub, chunks: &hubtunnel.ChunkClient{Host: cfg.Host, Client: counted}}
		// The hub grants the agent its namespace as it accepts the cluster.
		var w watch.Interface
		benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "a watch of the works of "+c+" as its agent", func(context.Context) (bool, error) {
			// The watch outlives the poll: the benchmark's context.
			w, err = hub.Watch(ctx, &workv1.ManifestWorkList{}, client.InNamespace(c))
			return err == nil, err
		})
		fs.list = append(fs.list, f)
		go func() {
			if err := f.run(ctx, w, fs); err != nil && ctx.Err() == nil {
				fs.fail(fmt.Errorf("simulated agent of %s: %w", c, err))
			}
		}()
	}
	return fs
}

// run waits in w for the set's work, then reads and verifies every chunk
// it lists.
func (f *fetcher) run(ctx context.Context, w watch.Interface, fs *fetchers) error {
	defer w.Stop()
	var work *workv1.ManifestWork
	for ev := range w.ResultChan() {
		if mw, ok := ev.Object.(*workv1.ManifestWork); ok && mw.Name == setName && ev.Type != watch.Deleted {
			work = mw
			break
		}
	}
	if work == nil {
		return fmt.Errorf("its watch ended before the set's work arrived")
	}
	seen := time.Now()
	f.seen.Store(&seen)
	w.Stop()
	p, err := payload.Of(&work.Spec)
	if err != nil || p == nil {
		return fmt.Errorf("the set's work holds no payload: %v", err)
	}
	for _, ref := range p.Spec.Chunks {
		if err := f.read(ctx, fs, work.Name, ref); err != nil {
			return err
		}
	}
	done := time.Now()
	f.done.Store(&done)
	return nil
}

// read reads one chunk as the agent does, its cluster's namespace first
// and then the hub tunnel, and checks it against ref; a request the hub
// refuses or cannot answer yet is sent again a second later.
func (f *fetcher) read(ctx context.Context, fs *fetchers, work string, ref payloadv1alpha1.ChunkRef) error {
	name := payload.ChunkName(ref.Digest)
	own := &payloadv1alpha1.ManifestChunk{}
	if err := f.hub.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: name}, own); !apierrors.IsNotFound(err) {
		return fmt.Errorf("ManifestChunk %s is in its cluster's namespace, or could not be looked up there (%v): the set's chunks stay in the set's namespace", name, err)
	}
	deadline := time.Now().Add(deliveryTimeout)
	for {
		fs.requests.Add(1)
		obj, err := f.chunks.Get(ctx, f.cluster, work, name)
		if err == nil {
			_, err := payload.Decode(obj, ref)
			return err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		fs.retries.Add(1)
		fs.mu.Lock()
		fs.lastError = err.Error()
		fs.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (fs *fetchers) fail(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.err == nil {
		fs.err = err
	}
}

func (fs *fetchers) failed() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.err
}

// lastRetry says why the last retried request failed.
func (fs *fetchers) lastRetry() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.lastError == "" {
		return "none refused"
	}
	return "last refusal: " + fs.lastError
}

func (fs *fetchers) finished() int {
	n := 0
	for _, f := range fs.list {
		if f.done.Load() != nil {
			n++
		}
	}
	return n
}

// doneTimes are the fetchers' finishing times.
func (fs *fetchers) doneTimes() []time.Time {
	var out []time.Time
	for _, f := range fs.list {
		out = append(out, *f.done.Load())
	}
	return out
}

// fetchTimes are the fetchers' times from their work's arrival to their
// last chunk verified, in seconds.
func (fs *fetchers) fetchTimes() []float64 {
	var out []float64
	for _, f := range fs.list {
		out = append(out, f.done.Load().Sub(*f.seen.Load()).Seconds())
	}
	return out
}

// reportStatus writes, as each simulated cluster's agent, the status that
// the agent of cluster reported on its work to the simulated cluster's
// work: what each cluster's agent would report for the same payload.
func (fs *fetchers) reportStatus(ctx context.Context, b *testing.B, wf *workFleet, cluster string) {
	b.Helper()
	src := &workv1.ManifestWork{}
	if err := wf.HubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: setName}, src); err != nil {
		b.Fatal(err)
	}
	err := runConcurrently(len(fs.list), benchkit.SimConcurrency, func(i int) error {
		f := fs.list[i]
		w := &workv1.ManifestWork{}
		if err := f.hub.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: setName}, w); err != nil {
			return err
		}
		return benchkit.UpdateStatus(ctx, f.hub, w, func() { w.Status = *src.Status.DeepCopy() })
	})
	if err != nil {
		b.Fatalf("report the simulated clusters' status: %v", err)
	}
}

// countingTransport counts the bytes of the answers' bodies read into n.
type countingTransport struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: t.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// chunkBytesServed is the sum of the sizes of the hub API server's answers
// to GETs of ManifestChunks so far (apiserver_response_sizes).
func chunkBytesServed(ctx context.Context, b *testing.B, wf *workFleet) int64 {
	b.Helper()
	m, err := framework.ScrapeAPIServer(ctx, wf.Hub.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	if fam, ok := m["apiserver_response_sizes"]; ok {
		for _, s := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["resource"] == "manifestchunks" && labels["verb"] == "GET" && s.GetHistogram() != nil {
				sum += s.GetHistogram().GetSampleSum()
			}
		}
	}
	return int64(sum)
}

// hubProcess is one process whose CPU time and peak memory are read.
type hubProcess struct {
	name string
	pid  int
	note string
}

// hubProcesses are the hub's processes that serve a set's delivery.
type hubProcesses []hubProcess

// processReading is the CPU time and memory of every process of a
// hubProcesses, in its order.
type processReading struct {
	cpu []time.Duration
	mem []benchkit.ProcMemory
}

func (wf *workFleet) hubProcesses(b *testing.B, tunnelPid int) hubProcesses {
	b.Helper()
	return hubProcesses{
		{name: "hub tunnel", pid: tunnelPid},
		{name: "hub API server", pid: wf.Hub.APIServerPid()},
		{name: "hub controller", pid: wf.Pid("hub", config.HubNamespace, benchkit.HubController)},
		{name: "etcd", pid: wf.Env.EtcdPid(), note: "shared by the hub and the managed clusters"},
	}
}

// read reads every process's CPU time and memory; with reset, it first
// resets each one's peak, so that a later reading's peak is the peak
// since this one.
func (ps hubProcesses) read(b *testing.B, reset bool) processReading {
	b.Helper()
	var r processReading
	for _, p := range ps {
		if reset {
			if err := benchkit.ResetPeak(p.pid); err != nil {
				b.Fatalf("reset the peak memory of the %s (pid %d): %v", p.name, p.pid, err)
			}
		}
		cpu, err := benchkit.ProcCPU(p.pid)
		if err != nil {
			b.Fatalf("the %s (pid %d): %v", p.name, p.pid, err)
		}
		m, err := benchkit.ReadProcMemory(p.pid)
		if err != nil {
			b.Fatalf("the %s (pid %d): %v", p.name, p.pid, err)
		}
		r.cpu, r.mem = append(r.cpu, cpu), append(r.mem, m)
	}
	return r
}

// record records each process's CPU time between before and after and its
// memory before and at its peak since.
func (ps hubProcesses) record(b *testing.B, before, after processReading) {
	b.Helper()
	for i, p := range ps {
		note := "from the set's creation to the last cluster delivered"
		if p.note != "" {
			note += "; " + p.note
		}
		benchkit.Record(b, p.name+": CPU; RSS before / peak", fmt.Sprintf("%.1f s; %s / %s", (after.cpu[i]-before.cpu[i]).Seconds(),
			benchkit.MiB(before.mem[i].RSS), benchkit.MiB(after.mem[i].HWM)), note)
	}
}

// storageReading is what the hub stores for the set at one moment, as the
// API server returns it (JSON with metadata, as etcd holds custom
// resources).
type storageReading struct {
	when string
	// chunks, works, set are the bytes of the set's namespace's chunks,
	// of the set's works in every cluster namespace, and of the set and
	// its ControllerRevisions.
	chunks, works, set int64
}

func (s storageReading) total() int64 { return s.chunks + s.works + s.set }

// setStorage reads what the hub stores for the set now.
func (wf *workFleet) setStorage(ctx context.Context, b *testing.B, when string) storageReading {
	b.Helper()
	r := storageReading{when: when, chunks: wf.storedChunkBytes(ctx, b, setNamespace)}
	works := &workv1.ManifestWorkList{}
	if err := wf.HubClient.List(ctx, works, client.MatchingLabels(workv1alpha1.OwnerLabels(setNamespace, setName))); err != nil {
		b.Fatal(err)
	}
	for i := range works.Items {
		r.works += jsonSize(b, &works.Items[i])
	}
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	switch err := wf.HubClient.Get(ctx, client.ObjectKey{Namespace: setNamespace, Name: setName}, set); {
	case err == nil:
		r.set += jsonSize(b, set)
	case !apierrors.IsNotFound(err):
		b.Fatal(err)
	}
	revisions := &appsv1.ControllerRevisionList{}
	if err := wf.HubClient.List(ctx, revisions, client.InNamespace(setNamespace)); err != nil {
		b.Fatal(err)
	}
	for i := range revisions.Items {
		r.set += jsonSize(b, &revisions.Items[i])
	}
	b.Logf("hub storage, %s: chunks %s, works %s (%d), set and revisions %s", when,
		benchkit.MiB(uint64(r.chunks)), benchkit.MiB(uint64(r.works)), len(works.Items), benchkit.MiB(uint64(r.set)))
	return r
}

// recordStorage records the growth of the hub's storage for the set at
// each reading after the first, against the payload's size.
func recordStorage(b *testing.B, readings []storageReading, size int64, clusters int) {
	b.Helper()
	base := readings[0].total()
	for _, r := range readings[1:] {
		grew := r.total() - base
		benchkit.Record(b, "hub storage for the set, "+r.when, benchkit.MiB(uint64(grew)),
			fmt.Sprintf("%.2f× the payload's %s (goal under 2×) for %d clusters: chunks %s, works %s, set and revisions %s",
				float64(grew)/float64(size), benchkit.MiB(uint64(size)), clusters,
				benchkit.MiB(uint64(r.chunks)), benchkit.MiB(uint64(r.works)), benchkit.MiB(uint64(r.set))))
	}
}

// jsonSize is the size of obj's JSON.
func jsonSize(b *testing.B, obj any) int64 {
	b.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	return int64(len(raw))
}
