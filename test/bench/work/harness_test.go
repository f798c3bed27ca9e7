package work

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

const (
	// runLabel labels every ManifestWork of the benchmark with the phase that
	// created it, so that each phase watches only its own works.
	runLabel = "bench.ocm.io/phase"
	// lowerBoundNamespace is the hub namespace of the lower bound's
	// ManifestWorks: no cluster's namespace, so no agent acts on them.
	lowerBoundNamespace = "bench-lower-bound"
	// workNamespace is the managed-cluster namespace of every ConfigMap.
	workNamespace = "default"
)

// workFleet is a fleet with the managed clusters joined by real agents.
type workFleet struct {
	*benchkit.Fleet
	clusters []string
	// hubW is a hub client that can watch.
	hubW client.WithWatch
	// spokes are admin clients of the managed clusters.
	spokes map[string]client.Client
}

// startWorkFleet starts the hub and -clusters managed clusters, joins each
// with its real agent, and makes sure each agent applies works (one warm-up
// work per cluster, deleted again) before anything is measured.
func startWorkFleet(b *testing.B) *workFleet {
	b.Helper()
	if *clusterCount < 1 || *clusterCount > 2 {
		b.Fatalf("-clusters %d: must be 1 or 2", *clusterCount)
	}
	clusters := []string{"cluster1", "cluster2"}[:*clusterCount]
	f := benchkit.StartFleet(b, config.HubOperatorValues{}, clusters...)
	ctx := b.Context()
	wf := &workFleet{Fleet: f, clusters: clusters, spokes: map[string]client.Client{}}
	var err error
	if wf.hubW, err = client.NewWithWatch(f.Hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: f.HubClient.RESTMapper()}); err != nil {
		b.Fatal(err)
	}
	for _, c := range clusters {
		t := benchkit.JoinCluster(ctx, b, f, c)
		b.Logf("joined %s: %s", c, t)
		wf.spokes[c] = f.Env.Cluster(c).Client()
		benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "hub namespace "+c, func(ctx context.Context) (bool, error) {
			ns := &corev1.Namespace{}
			if err := f.HubClient.Get(ctx, client.ObjectKey{Name: c}, ns); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return ns.Status.Phase == corev1.NamespaceActive, nil
		})
	}
	if *hubQPS > 0 {
		for _, c := range clusters {
			wf.setHubQPS(ctx, b, c, *hubQPS)
		}
	}
	if err := f.HubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lowerBoundNamespace}}); err != nil {
		b.Fatal(err)
	}
	// Warm up: every agent applies one work, which is then deleted.
	start := time.Now()
	for _, c := range clusters {
		w := configMapWork(c, "bench-warm-up", "warm-up")
		if err := f.HubClient.Create(ctx, w); err != nil {
			b.Fatal(err)
		}
		benchkit.Poll(ctx, b, benchkit.SlowPoll, 2*time.Minute, "the warm-up work of "+c+" Applied", func(ctx context.Context) (bool, error) {
			if err := f.HubClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return false, err
			}
			return applied(w), nil
		})
	}
	wf.deletePhase(ctx, b, "warm-up")
	b.Logf("warm-up: one work per cluster applied and deleted in %s", time.Since(start).Round(time.Millisecond))
	return wf
}

// setHubQPS restarts the agent of cluster with --hub-kube-api-qps qps and
// --hub-kube-api-burst 2×qps (the runner restarts a process whose pod
// template changed) and waits until the new process is ready.
func (wf *workFleet) setHubQPS(ctx context.Context, b *testing.B, cluster string, qps int) {
	b.Helper()
	spoke := wf.spokes[cluster]
	d := &appsv1.Deployment{}
	if err := spoke.Get(ctx, client.ObjectKey{Namespace: config.AgentNamespace, Name: benchkit.AgentDeployment}, d); err != nil {
		b.Fatal(err)
	}
	old := wf.Pid(cluster, config.AgentNamespace, benchkit.AgentDeployment)
	// The component runner reports the Deployment's status meanwhile.
	err := benchkit.Update(ctx, spoke, d, func() {
		ct := &d.Spec.Template.Spec.Containers[0]
		ct.Args = append(ct.Args, fmt.Sprintf("--hub-kube-api-qps=%d", qps), fmt.Sprintf("--hub-kube-api-burst=%d", 2*qps))
	})
	if err != nil {
		b.Fatal(err)
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 2*time.Minute, "the agent of "+cluster+" restarted", func(context.Context) (bool, error) {
		pid := wf.Pid(cluster, config.AgentNamespace, benchkit.AgentDeployment)
		return pid != 0 && pid != old, nil
	})
	wf.WaitReady(ctx, b, cluster, config.AgentNamespace, benchkit.AgentDeployment)
	b.Logf("agent of %s: hub QPS %d, burst %d", cluster, qps, 2*qps)
}

// configMapWork is a ManifestWork for cluster with one ConfigMap named name
// in workNamespace, labeled with phase.
func configMapWork(cluster, name, phase string) *workv1.ManifestWork {
	cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"a":"b"}}`, name, workNamespace)
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, Labels: map[string]string{runLabel: phase}},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(cm)}},
		}}},
	}
}

// applied reports whether w's Applied condition is True for its generation.
func applied(w *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
}

// deletePhase deletes every ManifestWork of phase, in the cluster
// namespaces and the lower bound's, and waits until they are gone (the
// agents have removed what they applied).
func (wf *workFleet) deletePhase(ctx context.Context, b *testing.B, phase string) {
	b.Helper()
	for _, ns := range append([]string{lowerBoundNamespace}, wf.clusters...) {
		if err := wf.HubClient.DeleteAllOf(ctx, &workv1.ManifestWork{}, client.InNamespace(ns), client.MatchingLabels{runLabel: phase}); err != nil {
			b.Fatalf("delete the works of %s in %s: %v", phase, ns, err)
		}
	}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 10*time.Minute, "the works of "+phase+" to be gone", func(ctx context.Context) (bool, error) {
		l := &workv1.ManifestWorkList{}
		if err := wf.HubClient.List(ctx, l, client.MatchingLabels{runLabel: phase}); err != nil {
			return false, err
		}
		return len(l.Items) == 0, nil
	})
}

// watchWorks calls fn with the time of arrival of every ManifestWork the hub
// watch delivers for phase, in every namespace, until ctx ends. It returns
// once the watch is established; a closed watch is reopened from the last
// resource version seen.
func (wf *workFleet) watchWorks(ctx context.Context, b *testing.B, phase string, fn func(at time.Time, w *workv1.ManifestWork)) {
	b.Helper()
	wf.watchWorksLabeled(ctx, b, client.MatchingLabels{runLabel: phase}, fn)
}

// watchWorksLabeled is watchWorks for the ManifestWorks that carry labels.
func (wf *workFleet) watchWorksLabeled(ctx context.Context, b *testing.B, labels client.MatchingLabels, fn func(at time.Time, w *workv1.ManifestWork)) {
	b.Helper()
	open := func(rv string) (watch.Interface, error) {
		return wf.hubW.Watch(ctx, &workv1.ManifestWorkList{}, labels,
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	}
	w, err := open("")
	if err != nil {
		b.Fatalf("watch the works labeled %v: %v", labels, err)
	}
	go func() {
		rv := ""
		for {
			for ev := range w.ResultChan() {
				at := time.Now()
				mw, ok := ev.Object.(*workv1.ManifestWork)
				if !ok {
					rv = "" // an error event: start afresh
					continue
				}
				rv = mw.ResourceVersion
				fn(at, mw)
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			var err error
			for w, err = open(rv); err != nil; w, err = open("") {
				if ctx.Err() != nil {
					return
				}
				time.Sleep(benchkit.SlowPoll)
			}
		}
	}()
}

// appliedTimes records, per work, when its create returned and when the
// hub watch first delivered it Applied.
type appliedTimes struct {
	mu      sync.Mutex
	created map[string]time.Time
	seen    map[string]time.Time
	// want is how many works to wait for; done closes when all were seen.
	want int
	done chan struct{}
	// notify, when set, receives every key seen Applied.
	notify chan string
}

func newAppliedTimes(want int) *appliedTimes {
	return &appliedTimes{created: map[string]time.Time{}, seen: map[string]time.Time{}, want: want, done: make(chan struct{})}
}

// observe is the watch callback.
func (a *appliedTimes) observe(at time.Time, w *workv1.ManifestWork) {
	if !applied(w) {
		return
	}
	key := w.Namespace + "/" + w.Name
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.seen[key]; ok {
		return
	}
	a.seen[key] = at
	if a.notify != nil {
		a.notify <- key
	}
	if len(a.seen) == a.want {
		close(a.done)
	}
}

// setCreated records when the create of key returned.
func (a *appliedTimes) setCreated(key string, at time.Time) {
	a.mu.Lock()
	a.created[key] = at
	a.mu.Unlock()
}

// latencies returns seen − created in seconds for every work, and the last
// time any work was seen Applied.
func (a *appliedTimes) latencies() ([]float64, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []float64
	var last time.Time
	for k, s := range a.seen {
		out = append(out, max(0, s.Sub(a.created[k]).Seconds()))
		if s.After(last) {
			last = s
		}
	}
	return out, last
}

// agentUsage is the memory and CPU time of every agent at one moment.
type agentUsage struct {
	mem map[string]benchkit.ProcMemory
	cpu map[string]time.Duration
}

// readAgents reads the memory and CPU time of every agent process, failing b
// if one is not the process of pids (it restarted).
func (wf *workFleet) readAgents(b *testing.B, pids map[string]int) agentUsage {
	b.Helper()
	u := agentUsage{mem: map[string]benchkit.ProcMemory{}, cpu: map[string]time.Duration{}}
	for _, c := range wf.clusters {
		pid := pids[c]
		if now := wf.Pid(c, config.AgentNamespace, benchkit.AgentDeployment); now != pid {
			b.Fatalf("the agent of %s is now pid %d, not %d: it restarted; see its log %s",
				c, now, pid, wf.Runner.LogPath(c, config.AgentNamespace, benchkit.AgentDeployment))
		}
		m, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		cpu, err := benchkit.ProcCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		u.mem[c], u.cpu[c] = m, cpu
	}
	return u
}
