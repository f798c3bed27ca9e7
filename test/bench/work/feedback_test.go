package work

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// ocmFeedback is OCM's figure for status feedback, to read ours by.
const ocmFeedback = "OCM: ~9 s p50 (status polled); target ≤ 50 ms"

// feedbackDeployment is the Deployment of the feedback work. The framework's
// control planes run no deployment controller, so only the benchmark writes
// its status.
const feedbackDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bench-feedback","namespace":"default"},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"bench"}},"template":{"metadata":{"labels":{"app":"bench"}},
"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`

// BenchmarkWorkFeedback measures, over -changes writes of a Deployment's
// status.readyReplicas on cluster1 (status subresource), the time from the
// write returning to a hub watch delivering the ManifestWork with the new
// value in its statusFeedback (a WellKnownStatus rule). The writes are
// -change-gap apart. Then, for each -feedback-works size, as many works
// with a Deployment each, spread over the clusters, all changed at once
// (feedbackFleet); each figure next to its raw-client lower bound.
func BenchmarkWorkFeedback(b *testing.B) {
	wf := startWorkFleet(b)
	ctx := b.Context()
	const phase, cluster = "feedback", "cluster1"
	w := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "bench-feedback", Labels: map[string]string{runLabel: phase}},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(feedbackDeployment)}}}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "bench-feedback"},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			}},
		},
	}
	// values receives every ReadyReplicas value the watch delivers, with
	// the time it arrived.
	type arrival struct {
		at    time.Time
		value int64
	}
	values := make(chan arrival, 1024)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wf.watchWorks(wctx, b, phase, func(at time.Time, w *workv1.ManifestWork) {
		if v := feedbackInt(w, "ReadyReplicas"); v != nil {
			values <- arrival{at: at, value: *v}
		}
	})
	if err := wf.HubClient.Create(ctx, w); err != nil {
		b.Fatal(err)
	}
	spoke := wf.spokes[cluster]
	key := client.ObjectKey{Namespace: "default", Name: "bench-feedback"}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "the feedback work Applied and its Deployment created", func(ctx context.Context) (bool, error) {
		if err := wf.HubClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return false, err
		}
		return applied(w), spoke.Get(ctx, key, &appsv1.Deployment{})
	})

	var lat []float64
	for i := 1; i <= *changeRuns; i++ {
		// Changes are spaced out so that each is measured on its own, not
		// behind the agent's handling of the previous one.
		time.Sleep(*changeGap)
		d := &appsv1.Deployment{}
		if err := spoke.Get(ctx, key, d); err != nil {
			b.Fatal(err)
		}
		// Every change differs from the one before, so a value equal to
		// this one still in values arrived before this write.
		ready := d.Status.ReadyReplicas%3 + 1
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: ready, AvailableReplicas: ready}
		before := time.Now()
		if err := spoke.Status().Update(ctx, d); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		timeout := time.After(time.Minute)
	wait:
		for {
			select {
			case v := <-values:
				if v.value == int64(ready) && v.at.After(before) {
					lat = append(lat, max(0, v.at.Sub(written).Seconds()))
					break wait
				}
			case <-timeout:
				b.Fatalf("change %d: ReadyReplicas %d not in the hub's statusFeedback after a minute; agent log %s",
					i, ready, wf.Runner.LogPath(cluster, config.AgentNamespace, benchkit.AgentDeployment))
			}
		}
	}
	p50 := benchkit.Quantile(lat, 0.5)
	lower := wf.feedbackLowerBound(ctx, b, phase, len(lat), 1, func(int) (string, string) { return cluster, "bench-feedback" })
	benchkit.Record(b, fmt.Sprintf("one work: status write on cluster1 → statusFeedback on hub, p50 of %d (%s apart)", len(lat), *changeGap), ms(p50), ocmFeedback)
	benchkit.Record(b, fmt.Sprintf("one work: status write on cluster1 → statusFeedback on hub, p99 / max of %d", len(lat)),
		ms(benchkit.Quantile(lat, 0.99))+" / "+ms(benchkit.Quantile(lat, 1)), "")
	benchkit.Record(b, "one work: feedback lower bound (raw client, same round trips), p50 / p99",
		ms(benchkit.Quantile(lower, 0.5))+" / "+ms(benchkit.Quantile(lower, 0.99)),
		fmt.Sprintf("ratio p50 %.1f×, p99 %.1f×", p50/benchkit.Quantile(lower, 0.5), benchkit.Quantile(lat, 0.99)/benchkit.Quantile(lower, 0.99)))
	b.ReportMetric(p50*1000, "p50-ms")
	cancel()
	wf.deletePhase(ctx, b, phase)

	sizes, err := parseSizes(*feedbackSizes)
	if err != nil {
		b.Fatalf("-feedback-works: %v", err)
	}
	for _, n := range sizes {
		wf.feedbackFleet(ctx, b, n)
	}
	b.ReportMetric(0, "ns/op")
}

// feedbackInt returns the integer feedback value name of w's first manifest.
func feedbackInt(w *workv1.ManifestWork, name string) *int64 {
	for _, m := range w.Status.ResourceStatus.Manifests {
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == name {
				return v.Value.Integer
			}
		}
	}
	return nil
}
