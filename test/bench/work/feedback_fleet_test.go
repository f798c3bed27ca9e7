package work

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// feedbackWork is a ManifestWork for cluster with one Deployment named name
// in workNamespace and a WellKnownStatus feedback rule for it.
func feedbackWork(cluster, name, phase string) *workv1.ManifestWork {
	d := strings.NewReplacer(`"bench-feedback"`, fmt.Sprintf("%q", name), `"default"`, fmt.Sprintf("%q", workNamespace)).Replace(feedbackDeployment)
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, Labels: map[string]string{runLabel: phase}},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(d)}}}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: workNamespace, Name: name},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			}},
		},
	}
}

// feedbackTimes matches, per work, a status write with the hub watch
// delivering its value in the work's statusFeedback.
type feedbackTimes struct {
	mu sync.Mutex
	// want is the ReadyReplicas value written; before is when the write
	// started, written when it returned, arrived when the watch delivered
	// the value (possibly before the write call returned).
	want             map[string]int64
	before, written  map[string]time.Time
	arrived          map[string]time.Time
	count, remaining int
	done             chan struct{}
}

func newFeedbackTimes(n int) *feedbackTimes {
	return &feedbackTimes{want: map[string]int64{}, before: map[string]time.Time{}, written: map[string]time.Time{},
		arrived: map[string]time.Time{}, count: n, remaining: n, done: make(chan struct{})}
}

// observe is the watch callback.
func (f *feedbackTimes) observe(at time.Time, w *workv1.ManifestWork) {
	v := feedbackInt(w, "ReadyReplicas")
	if v == nil {
		return
	}
	key := w.Namespace + "/" + w.Name
	f.mu.Lock()
	defer f.mu.Unlock()
	want, ok := f.want[key]
	if _, seen := f.arrived[key]; !ok || seen || *v != want || !at.After(f.before[key]) {
		return
	}
	f.arrived[key] = at
	if f.remaining--; f.remaining == 0 {
		close(f.done)
	}
}

// latencies returns arrived − written, in seconds, for every change.
func (f *feedbackTimes) latencies() []float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]float64, 0, len(f.arrived))
	for k, at := range f.arrived {
		out = append(out, max(0, at.Sub(f.written[k]).Seconds()))
	}
	return out
}

// feedbackFleet measures status feedback with n works spread over the
// clusters, each with its own Deployment: once every work is Applied, the
// benchmark writes every Deployment's status (-concurrency writes in
// flight) and times each from its write returning to the hub watch
// delivering the new value. Then the lower bound of the same changes: a raw
// client reads each Deployment on the managed cluster and writes a
// ManifestWork's status on the hub.
func (wf *workFleet) feedbackFleet(ctx context.Context, b *testing.B, n int) {
	b.Helper()
	phase := fmt.Sprintf("feedback-%d", n)
	names := make([]string, n)
	cluster := func(i int) string { return wf.clusters[i%len(wf.clusters)] }
	ready := newAppliedTimes(n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wf.watchWorks(wctx, b, phase, ready.observe)
	if err := runConcurrently(n, *concurrency, func(i int) error {
		names[i] = fmt.Sprintf("%s-%04d", phase, i)
		return wf.HubClient.Create(ctx, feedbackWork(cluster(i), names[i], phase))
	}); err != nil {
		b.Fatalf("create the works of %s: %v", phase, err)
	}
	select {
	case <-ready.done:
	case <-time.After(2*time.Minute + time.Duration(n)*200*time.Millisecond):
		b.Fatalf("%s: not every work Applied", phase)
	}

	ft := newFeedbackTimes(n)
	wf.watchWorks(wctx, b, phase, ft.observe)
	start := time.Now()
	if err := runConcurrently(n, *concurrency, func(i int) error {
		key := cluster(i) + "/" + names[i]
		ft.mu.Lock()
		ft.want[key], ft.before[key] = 2, time.Now()
		ft.mu.Unlock()
		if err := wf.writeReady(ctx, cluster(i), names[i], 2); err != nil {
			return err
		}
		ft.mu.Lock()
		ft.written[key] = time.Now()
		ft.mu.Unlock()
		return nil
	}); err != nil {
		b.Fatalf("%s: status writes: %v", phase, err)
	}
	select {
	case <-ft.done:
	case <-time.After(time.Minute + time.Duration(n)*100*time.Millisecond):
		b.Fatalf("%s: only %d of %d feedback values reached the hub", phase, n-ft.remaining, n)
	}
	took := time.Since(start)
	lat := ft.latencies()
	lower := wf.feedbackLowerBound(ctx, b, phase, n, *concurrency, func(i int) (string, string) { return cluster(i), names[i] })
	p50, p99 := benchkit.Quantile(lat, 0.5), benchkit.Quantile(lat, 0.99)
	lb50, lb99 := benchkit.Quantile(lower, 0.5), benchkit.Quantile(lower, 0.99)
	benchkit.Record(b, fmt.Sprintf("%d works: status write → statusFeedback on hub, p50 / p99 (all written at once)", n),
		ms(p50)+" / "+ms(p99), fmt.Sprintf("every change on the hub %s after the first write", benchkit.Seconds(took)))
	benchkit.Record(b, fmt.Sprintf("%d works: feedback lower bound (raw client, same round trips), p50 / p99", n),
		ms(lb50)+" / "+ms(lb99), fmt.Sprintf("ratio p50 %.1f×, p99 %.1f×", p50/lb50, p99/lb99))
	b.ReportMetric(p50*1000, fmt.Sprintf("feedback-%d-p50-ms", n))
	cancel()
	wf.deletePhase(ctx, b, phase)
}

// writeReady writes status.readyReplicas of Deployment name on cluster.
func (wf *workFleet) writeReady(ctx context.Context, cluster, name string, ready int32) error {
	d := &appsv1.Deployment{}
	if err := wf.spokes[cluster].Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: name}, d); err != nil {
		return err
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: ready, AvailableReplicas: ready}
	return wf.spokes[cluster].Status().Update(ctx, d)
}

// feedbackLowerBound does, n times with conc in flight, the round trips a
// status change needs at the least to reach the hub once its write returned
// (where the agent's figure starts): a read of the i-th Deployment on the
// managed cluster and the status write of a ManifestWork on the hub (in a
// namespace no agent serves). The Deployments are not written again, so
// the agents stay idle. It returns the time of the two round trips per
// change, in seconds.
func (wf *workFleet) feedbackLowerBound(ctx context.Context, b *testing.B, phase string, n, conc int, target func(i int) (cluster, name string)) []float64 {
	b.Helper()
	lbPhase := "lb-" + phase
	works := make([]*workv1.ManifestWork, n)
	if err := runConcurrently(n, conc, func(i int) error {
		works[i] = configMapWork(lowerBoundNamespace, fmt.Sprintf("%s-%04d", lbPhase, i), lbPhase)
		return wf.HubClient.Create(ctx, works[i])
	}); err != nil {
		b.Fatalf("lower bound %s: %v", phase, err)
	}
	lat := make([]float64, n)
	if err := runConcurrently(n, conc, func(i int) error {
		c, name := target(i)
		written := time.Now()
		d := &appsv1.Deployment{}
		if err := wf.spokes[c].Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: name}, d); err != nil {
			return err
		}
		w := works[i]
		v := int64(d.Status.ReadyReplicas)
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
			ResourceMeta:    workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: workNamespace, Name: name},
			StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: &v}}}},
			Conditions:      []metav1.Condition{{Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue, Reason: "StatusFeedbackSynced", LastTransitionTime: metav1.Now()}},
		}}
		if err := wf.HubClient.Status().Update(ctx, w); err != nil {
			return err
		}
		lat[i] = time.Since(written).Seconds()
		return nil
	}); err != nil {
		b.Fatalf("lower bound %s: %v", phase, err)
	}
	wf.deletePhase(ctx, b, lbPhase)
	return lat
}
