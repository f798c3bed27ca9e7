package work

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/payloadgen"
)

// Knobs of BenchmarkWorkLargePayload.
var (
	payloadMiB    = flag.Int("payload-mib", 50, "BenchmarkWorkLargePayload: size of the generated payload in MiB (CRDs and ConfigMaps)")
	payloadChange = flag.Float64("payload-change", 0.01, "BenchmarkWorkLargePayload: share of the payload's ConfigMaps changed by the second generation")
)

// largeWorkName names the benchmark's large ManifestWork in every cluster.
const largeWorkName = "bench-large"

// BenchmarkWorkLargePayload delivers a generated payload of -payload-mib
// MiB (CRDs and ConfigMaps) as a large payload to each cluster, then a
// second generation with -payload-change of its ConfigMaps changed, and
// records the time to Applied, the bytes the hub stores and writes, and
// the agents' peak memory.
func BenchmarkWorkLargePayload(b *testing.B) {
	wf := startWorkFleet(b)
	ctx := b.Context()
	manifests := payloadgen.Generate(payloadgen.Options{MiB: *payloadMiB, Namespace: workNamespace}).Manifests
	start := time.Now()
	ref, chunks, err := payload.Split(largeWorkName, manifests)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("payload: %d manifests, %s in %d chunks, split in %s", ref.Spec.Manifests, benchkit.MiB(uint64(ref.Spec.Size)), len(chunks), time.Since(start).Round(time.Millisecond))
	refManifest, err := payload.Manifest(ref)
	if err != nil {
		b.Fatal(err)
	}
	for i, c := range wf.clusters {
		pid := wf.Pid(c, config.AgentNamespace, benchkit.AgentDeployment)
		before, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		written, err := payload.Write(ctx, wf.HubClient, c, chunks)
		if err != nil {
			b.Fatal(err)
		}
		wrote := time.Since(start)
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: largeWorkName, Labels: map[string]string{runLabel: "large"}}}
		w.Spec.Workload.Manifests = []workv1.Manifest{refManifest}
		if err := wf.HubClient.Create(ctx, w); err != nil {
			b.Fatal(err)
		}
		wf.waitLargeApplied(ctx, b, c, 1)
		took := time.Since(start)
		after, err := benchkit.ReadProcMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		stored := wf.storedChunkBytes(ctx, b, c)
		if i == 0 {
			benchkit.Record(b, fmt.Sprintf("%s payload (%d manifests, %d chunks): hub stores its chunks in", benchkit.MiB(uint64(ref.Spec.Size)), ref.Spec.Manifests, len(chunks)),
				benchkit.MiB(uint64(stored)), fmt.Sprintf("%.2f× the payload per cluster namespace (gzip %s of data); goal under 2×", float64(stored)/float64(ref.Spec.Size), benchkit.MiB(uint64(written.StoredBytes))))
		}
		benchkit.Record(b, fmt.Sprintf("%s: chunks written / work created → Applied", c), benchkit.Seconds(wrote)+" / "+benchkit.Seconds(took), "from the first chunk write")
		benchkit.Record(b, fmt.Sprintf("%s: agent RSS before / peak (VmHWM) after", c), benchkit.MiB(before.RSS)+" / "+benchkit.MiB(after.HWM),
			"one chunk and one manifest in memory at a time; the verified chunks on disk")
	}

	// The second generation: a share of the ConfigMaps changed.
	every := max(1, int(1/(*payloadChange)))
	next := payloadgen.Generate(payloadgen.Options{MiB: *payloadMiB, Namespace: workNamespace, Generation: 2,
		Changed: func(i int) bool { return i%every == every-1 }}).Manifests
	ref2, chunks2, err := payload.Split(largeWorkName, next)
	if err != nil {
		b.Fatal(err)
	}
	m2, err := payload.Manifest(ref2)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range wf.clusters {
		start := time.Now()
		written, err := payload.Write(ctx, wf.HubClient, c, chunks2)
		if err != nil {
			b.Fatal(err)
		}
		w := &workv1.ManifestWork{}
		if err := wf.HubClient.Get(ctx, client.ObjectKey{Namespace: c, Name: largeWorkName}, w); err != nil {
			b.Fatal(err)
		}
		if err := benchkit.Update(ctx, wf.HubClient, w, func() { w.Spec.Workload.Manifests = []workv1.Manifest{m2} }); err != nil {
			b.Fatal(err)
		}
		wf.waitLargeApplied(ctx, b, c, w.Generation)
		benchkit.Record(b, fmt.Sprintf("%s: %.0f %% of the ConfigMaps changed: chunks written", c, 100/float64(every)),
			fmt.Sprintf("%d of %d, %s of %s (%.2f %%)", written.Chunks, len(chunks2), benchkit.MiB(uint64(written.Bytes)), benchkit.MiB(uint64(ref2.Spec.Size)),
				100*float64(written.Bytes)/float64(ref2.Spec.Size)), fmt.Sprintf("%s stored, compressed", benchkit.MiB(uint64(written.StoredBytes))))
		benchkit.Record(b, fmt.Sprintf("%s: the change written → Applied", c), benchkit.Seconds(time.Since(start)), "")
		// The peak since the agent started: both generations, and the
		// watches of the applied objects, which start once the first is
		// applied.
		m, err := benchkit.ReadProcMemory(wf.Pid(c, config.AgentNamespace, benchkit.AgentDeployment))
		if err != nil {
			b.Fatal(err)
		}
		benchkit.Record(b, fmt.Sprintf("%s: agent peak (VmHWM) after both generations", c), benchkit.MiB(m.HWM), "with the watches' first lists of the applied objects")
	}
	wf.deletePhase(ctx, b, "large")
	b.ReportMetric(0, "ns/op")
}

// waitLargeApplied waits until the large work of cluster is Applied and its
// payload staged at generation gen or later.
func (wf *workFleet) waitLargeApplied(ctx context.Context, b *testing.B, cluster string, gen int64) {
	b.Helper()
	benchkit.Poll(ctx, b, benchkit.SlowPoll, 15*time.Minute, "the large work of "+cluster+" Applied", func(ctx context.Context) (bool, error) {
		w := &workv1.ManifestWork{}
		if err := wf.HubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: largeWorkName}, w); err != nil {
			return false, err
		}
		staged := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged)
		return w.Generation >= gen && applied(w) && staged != nil && staged.Status == metav1.ConditionTrue && staged.ObservedGeneration == w.Generation, nil
	})
}

// storedChunkBytes is the size of the JSON of every ManifestChunk of
// namespace as the API server returns it: what etcd holds for them, less
// its own overhead per key.
func (wf *workFleet) storedChunkBytes(ctx context.Context, b *testing.B, namespace string) int64 {
	b.Helper()
	list := &payloadv1alpha1.ManifestChunkList{}
	if err := wf.HubClient.List(ctx, list, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	var n int64
	for i := range list.Items {
		raw, err := json.Marshal(&list.Items[i])
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(raw))
	}
	return n
}
