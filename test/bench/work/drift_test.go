package work

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// driftConfigMap is the ConfigMap of the drift work; driftValue is its data.
const (
	driftConfigMap = "bench-drift"
	driftValue     = "from-the-hub"
)

// BenchmarkWorkDrift measures drift restore: -changes times, someone on
// cluster1 edits the ConfigMap a work applied (an update of its data), and
// each restore is timed from the edit returning to a watch of the managed
// cluster delivering the ConfigMap with the work's data again. The edits
// are -change-gap apart. Next to it, the raw-client lower bound: the
// benchmark edits a ConfigMap no work manages, waits for its own watch to
// deliver the edit, writes the data back and waits for the watch to deliver
// that: the watch delivery and the one write a restore needs at the least.
func BenchmarkWorkDrift(b *testing.B) {
	wf := startWorkFleet(b)
	ctx := b.Context()
	const phase, cluster = "drift", "cluster1"
	manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"value":%q}}`, driftConfigMap, driftValue)
	w := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "bench-drift", Labels: map[string]string{runLabel: phase}},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
	if err := wf.HubClient.Create(ctx, w); err != nil {
		b.Fatal(err)
	}
	spoke := wf.spokes[cluster]
	key := client.ObjectKey{Namespace: "default", Name: driftConfigMap}
	benchkit.Poll(ctx, b, benchkit.SlowPoll, time.Minute, "the drift work Applied and its ConfigMap created", func(ctx context.Context) (bool, error) {
		if err := wf.HubClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return false, err
		}
		return applied(w), spoke.Get(ctx, key, &corev1.ConfigMap{})
	})

	restore := wf.driftRuns(ctx, b, cluster, key, true)
	bound := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bench-drift-bound"}, Data: map[string]string{"value": driftValue}}
	if err := spoke.Create(ctx, bound); err != nil {
		b.Fatal(err)
	}
	lower := wf.driftRuns(ctx, b, cluster, client.ObjectKeyFromObject(bound), false)

	p50, lb50 := benchkit.Quantile(restore, 0.5), benchkit.Quantile(lower, 0.5)
	benchkit.Record(b, fmt.Sprintf("drift: edit on cluster1 → restored (managed cluster watch), p50 / p99 of %d (%s apart)", len(restore), *changeGap),
		ms(p50)+" / "+ms(benchkit.Quantile(restore, 0.99)), "OCM: restored at the next resync (minutes); target ≤ 100 ms")
	benchkit.Record(b, "drift: lower bound (watch delivery, one write back), p50 / p99", ms(lb50)+" / "+ms(benchkit.Quantile(lower, 0.99)),
		fmt.Sprintf("ratio p50 %.1f×", p50/lb50))
	b.ReportMetric(p50*1000, "restore-p50-ms")
	b.ReportMetric(0, "ns/op")
	if err := spoke.Delete(ctx, bound); err != nil {
		b.Fatal(err)
	}
	wf.deletePhase(ctx, b, phase)
}

// driftRuns edits the ConfigMap key on cluster -changes times and returns
// the seconds from each edit returning to a watch delivering the ConfigMap
// with driftValue again. The agent restores it when byAgent; otherwise the
// benchmark does, as soon as its watch delivers the edit.
func (wf *workFleet) driftRuns(ctx context.Context, b *testing.B, cluster string, key client.ObjectKey, byAgent bool) []float64 {
	b.Helper()
	c, err := client.NewWithWatch(wf.Env.Cluster(cluster).RESTConfig(), client.Options{Scheme: apis.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	var out []float64
	for i := 1; i <= *changeRuns; i++ {
		// Edits are spaced out so that each is measured on its own, not
		// behind the agent's pacing of the previous one.
		time.Sleep(*changeGap)
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, cm); err != nil {
			b.Fatal(err)
		}
		wch, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(key.Namespace),
			client.MatchingFields{"metadata.name": key.Name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: cm.ResourceVersion}})
		if err != nil {
			b.Fatal(err)
		}
		edited := cm.DeepCopy()
		edited.Data = map[string]string{"value": "edited-" + strconv.Itoa(i)}
		if err := c.Update(ctx, edited); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		restoredAt, err := awaitRestore(ctx, wch, edited.ResourceVersion, func(seen *corev1.ConfigMap) error {
			if byAgent {
				return nil
			}
			seen = seen.DeepCopy()
			seen.Data = map[string]string{"value": driftValue}
			return c.Update(ctx, seen)
		})
		wch.Stop()
		if err != nil {
			b.Fatalf("edit %d of %s: %v; agent log %s", i, key, err, wf.Runner.LogPath(cluster, config.AgentNamespace, benchkit.AgentDeployment))
		}
		out = append(out, max(0, restoredAt.Sub(written).Seconds()))
	}
	return out
}

// awaitRestore reads w until it delivers the ConfigMap with driftValue
// after the edit of resourceVersion editRV, calling onEdit when it delivers
// the edit itself, and returns when the restore arrived. It gives up after
// a minute.
func awaitRestore(ctx context.Context, w watch.Interface, editRV string, onEdit func(*corev1.ConfigMap) error) (time.Time, error) {
	timeout := time.After(time.Minute)
	sawEdit := false
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("the watch closed")
			}
			at := time.Now()
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM || ev.Type != watch.Modified {
				continue
			}
			switch {
			case cm.ResourceVersion == editRV:
				sawEdit = true
				if err := onEdit(cm); err != nil {
					return time.Time{}, err
				}
			case sawEdit && cm.Data["value"] == driftValue:
				return at, nil
			}
		case <-timeout:
			return time.Time{}, fmt.Errorf("not restored within a minute")
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}
