package rollout

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// BenchmarkUndo rolls a ManifestWorkReplicaSet of one ConfigMap out over
// every cluster at revision 1, then at revision 2, then, -undo-after later,
// runs `kubectl ocm work rollout undo` in process, once with rollout
// strategy All and once with Progressive (-undo-max-concurrency, no gates). From the command's
// start it measures the first work written back from revision 1 (a hub
// watch delivers it), every work back at revision 1 and Applied (each
// acknowledged by its simulated agent), and the set's rollout Complete
// with every work Applied in its summary.
func BenchmarkUndo(b *testing.B) {
	f := startFleet(b, true)
	ctx := b.Context()
	n := len(f.clusters)
	runs := []struct {
		name, label string
		strategy    clusterv1alpha1.RolloutStrategy
	}{
		{name: "undo-all", label: "All", strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}},
		{name: "undo-progressive", label: "Progressive " + *undoProgress, strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString(*undoProgress)}}},
	}
	for _, run := range runs {
		times := &revisionTimes{}
		stop := f.watchWorks(ctx, b, workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey, setLabel(b, run.name), times.observe)
		set := newSet(run.name, run.strategy, nil, configMap("default", run.name, "v1"))
		start := time.Now()
		rev1 := f.createSet(ctx, b, set, times)
		waitApplied(ctx, b, times, f.clusters, run.name+" revision 1")
		f.waitRolledOut(ctx, b, run.name)
		b.Logf("%s: revision 1 created → rolled out in %s", run.label, benchkit.Seconds(time.Since(start)))
		start = time.Now()
		f.setTemplate(ctx, b, set, times, configMap("default", run.name, "v2"))
		waitApplied(ctx, b, times, f.clusters, run.name+" revision 2")
		f.waitRolledOut(ctx, b, run.name)
		b.Logf("%s: template changed → revision 2 rolled out in %s", run.label, benchkit.Seconds(time.Since(start)))
		pause(ctx, b, *undoAfter)

		times.target(rev1)
		start = time.Now()
		r := f.mustOCM(ctx, b, "work", "rollout", "undo", run.name, "-n", setNamespace)
		b.Logf("$ kubectl ocm work rollout undo %s -n %s\n%s", run.name, setNamespace, r.out)
		back := waitApplied(ctx, b, times, f.clusters, run.name+" back at revision 1")
		complete := f.waitRolledOut(ctx, b, run.name)
		updated, _ := times.snapshot()
		first, err := spreadOf(start, f.clusters, updated)
		if err != nil {
			b.Fatalf("%s: works back at revision 1: %v", run.name, err)
		}
		applied := back.Sub(start)
		done := complete.Sub(start)
		benchkit.Record(b, fmt.Sprintf("%s: undo → first work back at revision 1 / every work back and Applied", run.label),
			fmt.Sprintf("%.2f / %.2f s", first.first.Seconds(), applied.Seconds()),
			fmt.Sprintf("%d clusters, undone %s after revision 2 rolled out; the undo command ran %.2f s; last work written back %.2f s", n, *undoAfter, r.took.Seconds(), first.last.Seconds()))
		ref := ""
		if run.strategy.Type == clusterv1alpha1.All {
			ref = kubeFleet
		}
		benchkit.Record(b, fmt.Sprintf("%s: undo → set's rollout Complete, %d Applied in its summary", run.label, n), benchkit.Seconds(done), ref)
		metric := map[clusterv1alpha1.RolloutType]string{clusterv1alpha1.All: "all", clusterv1alpha1.Progressive: "progressive"}[run.strategy.Type]
		b.ReportMetric(applied.Seconds(), metric+"-applied-s")
		b.ReportMetric(done.Seconds(), metric+"-complete-s")
		b.ReportMetric(first.last.Seconds(), metric+"-written-s")
		stop()
		f.deleteSet(ctx, b, run.name)
	}
	b.ReportMetric(0, "ns/op")
}

// pause waits d, a measurement condition, not synchronization.
func pause(ctx context.Context, b *testing.B, d time.Duration) {
	b.Helper()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	}
}
