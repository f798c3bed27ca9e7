package scale

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/propagation"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// BenchmarkKubeFleet runs KubeFleet's published scenario (its Q1 2026
// performance report) on one hub: -kubefleet-clusters clusters (2 real
// agents, the rest simulated by sim-agents), -kubefleet-placements
// placements each selecting a tenth of the fleet by label, split in 3
// decision groups, and -kubefleet-rollouts concurrent
// ManifestWorkReplicaSets rolled out Progressive through those 3 groups,
// half of a group at a time; then a hub controller restart and its full
// resync. It writes kubefleet.json and kubefleet.md (our figures beside
// KubeFleet's) to -out.
func BenchmarkKubeFleet(b *testing.B) {
	dir := resultsDir(b)
	n := *kfClusters
	if n <= len(realClusters) || *kfRollouts > *kfPlacements {
		b.Fatalf("-kubefleet-clusters %d must exceed %d and -kubefleet-rollouts %d must not exceed -kubefleet-placements %d", n, len(realClusters), *kfRollouts, *kfPlacements)
	}
	f := benchkit.StartFleet(b, config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}, HubLeaderElection: hubLeaderElection(*hubLeaseDuration)}, realClusters...)
	ctx := b.Context()
	for _, c := range realClusters {
		b.Logf("joined %s: %s", c, benchkit.JoinCluster(ctx, b, f, c))
	}
	o := newObserver(b, f)
	o.agentCluster = realClusters[0]
	o.profileDir = dir
	bindGlobalSet(ctx, b, o.c, kfNamespace)
	sims := startSimProcess(b, f)
	o.simPid = sims.pid()

	start := time.Now()
	names := append(slices.Clone(realClusters), sims.register(ctx, b, n-len(realClusters), o.c)...)
	waitAvailable(ctx, b, o.c, n)
	r := &KubeFleetReport{Machine: machine(), Clusters: n, Simulated: n - len(realClusters), Placements: *kfPlacements, Rollouts: *kfRollouts,
		RegisterSeconds: time.Since(start).Seconds(), Phases: map[string]Phase{}}
	b.Logf("registered %d clusters in %s", n, benchkit.Seconds(time.Since(start)))
	stages := labelClusters(ctx, b, o.c, names)

	w := o.begin(ctx, b)
	took, placed := placeAll(ctx, b, o.c, stages)
	r.Phases[PhasePlacements] = o.phase(ctx, b, w, took)
	r.Placement = benchkit.Summarize(placed)
	b.Logf("%d placements decided in %s: %s", len(placed), benchkit.Seconds(took), r.Placement)

	w = o.begin(ctx, b)
	before := scrapeHub(ctx, b, o)
	profile := o.profileAPIServer(ctx, KubeFleetProfile, "apiserver-cpu-kubefleet-rollouts.pb.gz")
	took, r.Stages, r.Rollout = rolloutAll(ctx, b, o.c, stages)
	r.Propagation = histogramSummary(before, scrapeHub(ctx, b, o), propagation.HistogramName)
	phase := o.phase(ctx, b, w, took)
	phase.Profile = keepProfile(b, o, PhaseRollouts, took, KubeFleetProfile, profile)
	r.Phases[PhaseRollouts] = phase
	b.Logf("%d rollouts done in %s; whole rollout %s; propagation %s", *kfRollouts, benchkit.Seconds(took), r.Rollout, r.Propagation)

	w = o.begin(ctx, b)
	took, relist, detail := restartHub(ctx, b, o, n+*kfPlacements+*kfRollouts, syscall.SIGKILL)
	r.Phases[PhaseResync] = o.phase(ctx, b, w, took)
	r.ResyncSeconds, r.ResyncAfterLeadSeconds, r.ResyncDetail = took.Seconds(), relist.Seconds(), detail
	b.Logf("full resync after a hub controller restart: %s (%s)", benchkit.Seconds(took), detail)

	storage, err := framework.ScrapeAPIServer(ctx, o.cfg)
	if err != nil {
		b.Fatal(err)
	}
	r.StorageMiB = storage.Sum("apiserver_storage_size_bytes", nil) / (1 << 20)
	if err := r.Write(dir); err != nil {
		b.Fatal(err)
	}
	for _, row := range r.Table() {
		benchkit.Record(b, row[0], row[2], "KubeFleet: "+cmp.Or(row[1], "—"))
	}
	b.Logf("report in %s", dir)
	b.ReportMetric(0, "ns/op")
}

// resultsDir is -out, or _output/bench-scale in the repository.
func resultsDir(b *testing.B) string {
	b.Helper()
	if *outDir != "" {
		return *outDir
	}
	root, err := framework.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	return root + "/_output/bench-scale"
}

// phase closes w as a Phase of length took.
func (o *observer) phase(ctx context.Context, b *testing.B, w *window, took time.Duration) Phase {
	b.Helper()
	r := o.end(ctx, b, w)
	p := Phase{Seconds: took.Seconds(), RequestsPerSecond: r.all, WritesPerSecond: r.writes, Requests: r.perKey, CPUCores: r.cpu, Memory: map[string]Process{}}
	for name, m := range o.memory(b) {
		p.Memory[name] = m
	}
	return p
}

// labelClusters gives every cluster its slice and stage label and returns
// the stage of each cluster by slice.
func labelClusters(ctx context.Context, b *testing.B, c client.Client, names []string) map[string]map[string]int {
	b.Helper()
	stages := map[string]map[string]int{}
	type labeled struct {
		name, slice string
		stage       int
	}
	var all []labeled
	for i, name := range names {
		slice := strconv.Itoa(i % kfSlices)
		stage := (i/kfSlices)%kfStages + 1
		if stages[slice] == nil {
			stages[slice] = map[string]int{}
		}
		stages[slice][name] = stage
		all = append(all, labeled{name, slice, stage})
	}
	start := time.Now()
	forEach(ctx, b, len(all), func(ctx context.Context, i int) error {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q,%q:"%d"}}}`, sliceLabel, all[i].slice, stageLabel, all[i].stage)
		return c.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: all[i].name}}, client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	b.Logf("labeled %d clusters with %d slices of %d stages in %s", len(all), kfSlices, kfStages, benchkit.Seconds(time.Since(start)))
	return stages
}

// forEach runs fn for 0..n-1, kfConcurrency at a time, failing b on the
// first error.
func forEach(ctx context.Context, b *testing.B, n int, fn func(context.Context, int) error) {
	b.Helper()
	sem := make(chan struct{}, kfConcurrency)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(ctx, i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// placementName is the scenario's i-th placement; it selects slice i % 10.
func placementName(i int) string { return fmt.Sprintf("p-%04d", i) }

// stagedPlacement returns placement i: the clusters of its slice, in one
// decision group per stage.
func stagedPlacement(i int) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: kfNamespace, Name: placementName(i)}}
	p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{sliceLabel: strconv.Itoa(i % kfSlices)}}}}}
	for s := 1; s <= kfStages; s++ {
		p.Spec.DecisionStrategy.GroupStrategy.DecisionGroups = append(p.Spec.DecisionStrategy.GroupStrategy.DecisionGroups,
			clusterv1beta1.DecisionGroup{GroupName: fmt.Sprintf("stage-%d", s), ClusterSelector: clusterv1beta1.GroupClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{stageLabel: strconv.Itoa(s)}}}})
	}
	return p
}

// placeAll creates the placements, kfConcurrency at a time, and returns the
// time until every one has decided its slice, and each one's time from its
// create to its decisions (its status counting every cluster of its slice,
// written after its PlacementDecisions), as seen by a watch.
func placeAll(ctx context.Context, b *testing.B, c client.WithWatch, stages map[string]map[string]int) (time.Duration, []float64) {
	b.Helper()
	count := *kfPlacements
	var mu sync.Mutex
	created := map[string]time.Time{}
	decided := map[string]float64{}
	want := func(name string) int {
		i, _ := strconv.Atoi(name[len("p-"):])
		return len(stages[strconv.Itoa(i%kfSlices)])
	}
	seen := func(obj any) {
		p, ok := obj.(*clusterv1beta1.Placement)
		if !ok || int(p.Status.NumberOfSelectedClusters) < want(p.Name) {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if t, ok := created[p.Name]; ok {
			if _, done := decided[p.Name]; !done {
				decided[p.Name] = now.Sub(t).Seconds()
			}
		}
	}
	runWatch(ctx, b, c, &clusterv1beta1.PlacementList{}, &clusterv1beta1.Placement{}, seen, client.InNamespace(kfNamespace))
	start := time.Now()
	forEach(ctx, b, count, func(ctx context.Context, i int) error {
		p := stagedPlacement(i)
		mu.Lock()
		created[p.Name] = time.Now()
		mu.Unlock()
		return c.Create(ctx, p)
	})
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, fmt.Sprintf("%d placements decided", count), func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(decided) == count, nil
	})
	took := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	out := make([]float64, 0, count)
	for _, s := range decided {
		out = append(out, s)
	}
	return took, out
}

// runWatch runs an informer of list's kind with opts until b ends, calling
// handle with every object added or updated, and waits for its sync.
func runWatch(ctx context.Context, b *testing.B, c client.WithWatch, list client.ObjectList, obj runtime.Object, handle func(any), opts ...client.ListOption) {
	b.Helper()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	loops := &sync.WaitGroup{}
	b.Cleanup(func() {
		cancel()
		loops.Wait()
	})
	synced := benchkit.RunInformer(runCtx, loops, benchkit.ListWatch(c, list, opts...), obj, handle)
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		b.Fatal("informer did not sync")
	}
}

// rolloutName is the scenario's i-th rollout, over placement i.
func rolloutName(i int) string { return fmt.Sprintf("r-%03d", i) }

// rolloutAll creates the rollouts at once, each a ManifestWorkReplicaSet of
// one ConfigMap over placement i, Progressive through its decision groups
// with half a stage at a time, and returns the time until every work of
// every rollout is Applied, each stage's completion times (from a
// rollout's create to the last cluster of the stage Applied) and each
// rollout's.
func rolloutAll(ctx context.Context, b *testing.B, c client.WithWatch, stages map[string]map[string]int) (time.Duration, []benchkit.Summary, benchkit.Summary) {
	b.Helper()
	count := *kfRollouts
	var mu sync.Mutex
	created := map[string]time.Time{}
	applied := map[string]map[string]time.Time{} // rollout → cluster → first Applied
	total := 0
	seen := func(obj any) {
		w, ok := obj.(*workv1.ManifestWork)
		if !ok {
			return
		}
		cond := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != w.Generation {
			return
		}
		set := w.Labels[workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey]
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if applied[set] == nil {
			applied[set] = map[string]time.Time{}
		}
		if _, ok := applied[set][w.Namespace]; !ok {
			applied[set][w.Namespace] = now
			total++
		}
	}
	runWatch(ctx, b, c, &workv1.ManifestWorkList{}, &workv1.ManifestWork{}, seen,
		client.HasLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey})
	want := 0
	for i := range count {
		want += len(stages[strconv.Itoa(i%kfSlices)])
	}
	start := time.Now()
	forEach(ctx, b, count, func(ctx context.Context, i int) error {
		slice := stages[strconv.Itoa(i%kfSlices)]
		set := stagedRollout(b, i, max(1, int(math.Ceil(float64(len(slice))/kfStages/2))))
		mu.Lock()
		created[kfNamespace+"."+set.Name] = time.Now()
		mu.Unlock()
		return c.Create(ctx, set)
	})
	benchkit.Poll(ctx, b, opPoll, *stepTimeout, fmt.Sprintf("%d works of %d rollouts Applied", want, count), func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return total >= want, nil
	})
	took := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	perStage := make([][]float64, kfStages)
	var whole []float64
	for i := range count {
		key := kfNamespace + "." + rolloutName(i)
		slice := stages[strconv.Itoa(i%kfSlices)]
		last := make([]time.Time, kfStages)
		for cluster, at := range applied[key] {
			if s := slice[cluster]; s > 0 && at.After(last[s-1]) {
				last[s-1] = at
			}
		}
		end := time.Time{}
		for s, at := range last {
			perStage[s] = append(perStage[s], at.Sub(created[key]).Seconds())
			if at.After(end) {
				end = at
			}
		}
		whole = append(whole, end.Sub(created[key]).Seconds())
	}
	out := make([]benchkit.Summary, kfStages)
	for s := range perStage {
		out[s] = benchkit.Summarize(perStage[s])
	}
	return took, out, benchkit.Summarize(whole)
}

// stagedRollout returns rollout i: one ConfigMap over placement i,
// Progressive with maxConcurrency clusters at a time.
func stagedRollout(b *testing.B, i, maxConcurrency int) *workv1alpha1.ManifestWorkReplicaSet {
	b.Helper()
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: rolloutName(i)}, Data: map[string]string{"rollout": rolloutName(i)}}
	raw, err := json.Marshal(cm)
	if err != nil {
		b.Fatal(err)
	}
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: kfNamespace, Name: rolloutName(i)},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: placementName(i), RolloutStrategy: clusterv1alpha1.RolloutStrategy{
				Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt(maxConcurrency)}}}},
		},
	}
}

// scrapeHub scrapes the hub controller's metrics.
func scrapeHub(ctx context.Context, b *testing.B, o *observer) framework.Metrics {
	b.Helper()
	info, _ := o.f.Runner.Process("hub", config.HubNamespace, benchkit.HubController)
	m, err := framework.ScrapeMetrics(ctx, &http.Client{Timeout: 10 * time.Second}, "http://"+benchkit.FlagValue(info.Args, "--metrics-bind-address")+"/metrics")
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// histogramSummary is the distribution of the observations of histogram
// name between two scrapes, its quantiles interpolated within buckets as
// Prometheus' histogram_quantile does.
func histogramSummary(before, after framework.Metrics, name string) benchkit.Summary {
	buckets := func(m framework.Metrics) (bounds, counts []float64) {
		fam, ok := m[name]
		if !ok {
			return nil, nil
		}
		for _, metric := range fam.GetMetric() {
			h := metric.GetHistogram()
			for i, bk := range h.GetBucket() {
				if i >= len(bounds) {
					bounds = append(bounds, bk.GetUpperBound())
					counts = append(counts, 0)
				}
				counts[i] += float64(bk.GetCumulativeCount())
			}
		}
		return bounds, counts
	}
	bounds, after0 := buckets(after)
	_, before0 := buckets(before)
	delta := make([]float64, len(after0))
	for i := range after0 {
		delta[i] = after0[i]
		if i < len(before0) {
			delta[i] -= before0[i]
		}
	}
	return BucketSummary(bounds, delta)
}
