package work

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
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
	*fleet
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
	f := startFleet(b, config.HubValues{}, clusters...)
	ctx := b.Context()
	wf := &workFleet{fleet: f, clusters: clusters, spokes: map[string]client.Client{}}
	var err error
	if wf.hubW, err = client.NewWithWatch(f.hub.RESTConfig(), client.Options{Scheme: apis.Scheme, Mapper: f.hubClient.RESTMapper()}); err != nil {
		b.Fatal(err)
	}
	for _, c := range clusters {
		t := joinCluster(ctx, b, f, c)
		b.Logf("joined %s: %s", c, t)
		wf.spokes[c] = f.env.Cluster(c).Client()
		poll(ctx, b, slowPoll, time.Minute, "hub namespace "+c, func(ctx context.Context) (bool, error) {
			ns := &corev1.Namespace{}
			if err := f.hubClient.Get(ctx, client.ObjectKey{Name: c}, ns); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return ns.Status.Phase == corev1.NamespaceActive, nil
		})
	}
	if err := f.hubClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lowerBoundNamespace}}); err != nil {
		b.Fatal(err)
	}
	// Warm up: every agent applies one work, which is then deleted.
	start := time.Now()
	for _, c := range clusters {
		w := configMapWork(c, "bench-warm-up", "warm-up")
		if err := f.hubClient.Create(ctx, w); err != nil {
			b.Fatal(err)
		}
		poll(ctx, b, slowPoll, 2*time.Minute, "the warm-up work of "+c+" Applied", func(ctx context.Context) (bool, error) {
			if err := f.hubClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
				return false, err
			}
			return applied(w), nil
		})
	}
	wf.deletePhase(ctx, b, "warm-up")
	b.Logf("warm-up: one work per cluster applied and deleted in %s", time.Since(start).Round(time.Millisecond))
	return wf
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
		if err := wf.hubClient.DeleteAllOf(ctx, &workv1.ManifestWork{}, client.InNamespace(ns), client.MatchingLabels{runLabel: phase}); err != nil {
			b.Fatalf("delete the works of %s in %s: %v", phase, ns, err)
		}
	}
	poll(ctx, b, slowPoll, 10*time.Minute, "the works of "+phase+" to be gone", func(ctx context.Context) (bool, error) {
		l := &workv1.ManifestWorkList{}
		if err := wf.hubClient.List(ctx, l, client.MatchingLabels{runLabel: phase}); err != nil {
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
	open := func(rv string) (watch.Interface, error) {
		return wf.hubW.Watch(ctx, &workv1.ManifestWorkList{}, client.MatchingLabels{runLabel: phase},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	}
	w, err := open("")
	if err != nil {
		b.Fatalf("watch the works of %s: %v", phase, err)
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
				time.Sleep(slowPoll)
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

// procCPU is a process's CPU time (utime + stime) from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(data))
}

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// parseProcStat returns utime + stime from the text of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may contain spaces, so
// the fields are counted after its closing parenthesis: utime and stime are
// fields 14 and 15 of the line, 12 and 13 after the name.
func parseProcStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("too few fields in %q", stat)
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// procMemory is a process's memory as /proc/<pid>/status reports it, in bytes.
type procMemory struct {
	rss uint64 // VmRSS: resident now
	hwm uint64 // VmHWM: peak resident
}

// readProcMemory reads /proc/<pid>/status.
func readProcMemory(pid int) (procMemory, error) {
	file, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	defer file.Close()
	return parseProcStatus(file)
}

// parseProcStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
func parseProcStatus(r io.Reader) (procMemory, error) {
	var m procMemory
	fields := map[string]*uint64{"VmRSS:": &m.rss, "VmHWM:": &m.hwm}
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		if len(parts) == 0 {
			continue
		}
		dst, ok := fields[parts[0]]
		if !ok {
			continue
		}
		if len(parts) != 3 || parts[2] != "kB" {
			return m, fmt.Errorf("unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			return m, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		*dst = kb << 10
		found++
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if found != len(fields) {
		return m, fmt.Errorf("no VmRSS or VmHWM line")
	}
	return m, nil
}

// agentUsage is the memory and CPU time of every agent at one moment.
type agentUsage struct {
	mem map[string]procMemory
	cpu map[string]time.Duration
}

// readAgents reads the memory and CPU time of every agent process, failing b
// if one is not the process of pids (it restarted).
func (wf *workFleet) readAgents(b *testing.B, pids map[string]int) agentUsage {
	b.Helper()
	u := agentUsage{mem: map[string]procMemory{}, cpu: map[string]time.Duration{}}
	for _, c := range wf.clusters {
		pid := pids[c]
		if now := wf.pid(c, config.AgentNamespace, agentDeployment); now != pid {
			b.Fatalf("the agent of %s is now pid %d, not %d: it restarted; see its log %s",
				c, now, pid, wf.runner.LogPath(c, config.AgentNamespace, agentDeployment))
		}
		m, err := readProcMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		cpu, err := procCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		u.mem[c], u.cpu[c] = m, cpu
	}
	return u
}
