package workcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/diff"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// configMapsFile writes count ConfigMaps cm-00, cm-01, ... of namespace app,
// each with 64 KiB of data (a chunk each in a payload), to file name; the
// data of the ConfigMaps in changed say so.
func configMapsFile(t *testing.T, name string, count int, changed ...int) string {
	t.Helper()
	var docs []string
	for i := range count {
		seed := fmt.Sprintf("cm-%02d-", i)
		for _, c := range changed {
			if c == i {
				seed += "changed-"
			}
		}
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d, namespace: app}\ndata: {v: %s}\n",
			i, strings.Repeat(seed, (64<<10)/len(seed)+1)))
	}
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(docs, "---\n")), 0o600))
	return p
}

// workPayload returns the ManifestPayload of ManifestWork name of cluster1.
func (fx *workCLIFixture) workPayload(t *testing.T, name string) (*workv1.ManifestWork, *payloadv1alpha1.ManifestPayload) {
	t.Helper()
	w := getWork(fx.ctx, t, fx.c, "cluster1", name)
	p, err := payload.Of(&w.Spec)
	require.NoError(t, err)
	require.NotNil(t, p, "ManifestWork %s is not a large payload", name)
	return w, p
}

// largePayloads checks work create's progress and summary for a large
// payload, what work get and work status show of it while its agent
// stages it and once it did, and work diff of two large payloads, which
// compares their manifests, and refuses a payload with a chunk missing.
func (fx *workCLIFixture) largePayloads(t *testing.T) {
	ctx, c, k := fx.ctx, fx.c, fx.k
	v1 := configMapsFile(t, "v1.yaml", 12)

	r := k.Run(ctx, "work", "create", "large", "-f", v1, "--clusters", "cluster1")
	clitest.ExpectOK(t, r, "Payload of large: 12 chunks written to namespace cluster1 (", ", 0 already on the hub\n",
		"ManifestWork large created in cluster cluster1\n")
	_, p := fx.workPayload(t, "large")
	n := len(p.Spec.Chunks)
	require.Equal(t, 12, n, "a chunk per ConfigMap of 64 KiB")
	assert.Contains(t, r.ErrOut, "Writing the payload of large to namespace cluster1: 6 of 12 chunks (", "progress on stderr")
	assert.Contains(t, r.ErrOut, "Writing the payload of large to namespace cluster1: 12 of 12 chunks (0.8 of 0.8 MiB)\n")

	t.Run("again with -o json: only the work on stdout and every chunk already there", func(t *testing.T) {
		r := k.Run(ctx, "work", "create", "large", "-f", v1, "--clusters", "cluster1", "--overwrite", "-o", "json")
		clitest.ExpectOK(t, r)
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.Out), &obj), "stdout is the work alone:\n%s", r.Out)
		assert.Equal(t, "ManifestWork", obj["kind"])
		assert.Contains(t, r.ErrOut, "Payload of large: 0 chunks written to namespace cluster1 (0.0 MiB, 0.0 MiB stored), 12 already on the hub\n")
	})

	t.Run("get and status while the agent stages the payload", func(t *testing.T) {
		w, _ := fx.workPayload(t, "large")
		staging := payload.Progress{Chunks: int64(n), Bytes: p.Spec.Size, PresentChunks: 10, PresentBytes: 10 * p.Spec.Size / 12}
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: payloadv1alpha1.WorkPayloadStaged, Status: metav1.ConditionFalse,
			Reason: payloadv1alpha1.ReasonChunksMissing, ObservedGeneration: w.Generation,
			Message: fmt.Sprintf("generation %d: %s; waiting for [sha256-ab]; nothing is applied until it is complete", w.Generation, staging)})
		require.NoError(t, c.Status().Update(ctx, w))

		r := k.Run(ctx, "work", "get", "large", "--clusters", "cluster1")
		clitest.ExpectOK(t, r, "PAYLOAD", "0.8 MiB in 12 chunks, 10 of 12 present")
		assert.True(t, clitest.HasRow(r.Out, "large", "cluster1", "12"), "MANIFESTS counts the payload's manifests:\n%s", r.Out)
		// The PAYLOAD column is there only when a work listed is large.
		assert.NotContains(t, k.Run(ctx, "work", "get", "web", "--clusters", "cluster1").Out, "PAYLOAD")

		clitest.ExpectOK(t, k.Run(ctx, "work", "status", "large", "--clusters", "cluster1"),
			"Payload: 0.8 MiB in 12 chunks, 10 of 12 present\n", "PayloadStaged: ChunksMissing: generation ",
			"No manifest of the payload is reported yet")
		r = k.Run(ctx, "work", "status", "large", "--clusters", "cluster1", "-o", "json")
		clitest.ExpectOK(t, r)
		var report workreport.Report
		require.NoError(t, json.Unmarshal([]byte(r.Out), &report))
		require.NotNil(t, report.Payload)
		assert.Equal(t, int64(12), report.Payload.Chunks)
		assert.Equal(t, int64(12), report.Payload.Manifests)
		assert.Equal(t, p.Spec.Size, report.Payload.Size)
		assert.Equal(t, int64(10), *report.Payload.PresentChunks)
	})

	t.Run("get and status once the agent applied it", func(t *testing.T) {
		fx.applyLarge(t, 12)
		clitest.ExpectOK(t, k.Run(ctx, "work", "get", "large", "--clusters", "cluster1"), "0.8 MiB in 12 chunks, staged")
		clitest.ExpectOK(t, k.Run(ctx, "work", "status", "large", "--clusters", "cluster1"),
			"Payload: 0.8 MiB in 12 chunks, staged\n", "ConfigMap   app/cm-00", "ConfigMap   app/cm-11")
	})

	t.Run("diff compares the manifests of two payloads", func(t *testing.T) {
		// cm-11 leaves, cm-03 changes: one chunk is new.
		v2 := configMapsFile(t, "v2.yaml", 11, 3)
		errOut := &clitest.SyncBuffer{}
		done := make(chan clitest.Result, 1)
		go func() {
			streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut}
			done <- k.RunWith(ctx, streams, "work", "diff", "large", "-f", v2, "--clusters", "cluster1", "--timeout", "60s")
		}()
		probe := fx.waitProbe(t, "large")
		pp, err := payload.Of(&probe.Spec)
		require.NoError(t, err)
		require.NotNil(t, pp, "the ReportDiff work is a large payload")
		got, progress, err := payload.Load(ctx, &pp.Spec, fx.chunkGetter("cluster1"))
		require.NoError(t, err)
		require.True(t, progress.Complete(), "the ReportDiff work's chunks are written before it: %s", progress)
		require.Len(t, got, 11)
		fx.reportDiff(t, probe, 11, 3)

		var res clitest.Result
		select {
		case res = <-done:
		case <-time.After(pollTimeout):
			t.Fatal("work diff did not end once the agent reported")
		}
		require.Error(t, res.Err, "the new manifests differ: exit 1\n%s", res.Out)
		for _, want := range []string{"# cluster1: 2 of 12 manifests change", "--- live/ConfigMap app/cm-03",
			"Deleted ConfigMap app/cm-11: the new manifests leave it out"} {
			assert.Contains(t, res.Out, want)
		}
		assert.NotContains(t, res.Out, "ManifestPayload", "the manifests are compared, not the payloads' chunk lists")
		assert.Contains(t, errOut.String(), "Writing the payload of large to namespace cluster1: 11 of 11 chunks")
	})

	t.Run("diff names a chunk missing from the work's payload", func(t *testing.T) {
		missing := payload.ChunkName(p.Spec.Chunks[5].Digest)
		require.NoError(t, c.Delete(ctx, &payloadv1alpha1.ManifestChunk{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: missing}}))
		r := k.Run(ctx, "work", "diff", "large", "-f", v1, "--clusters", "cluster1")
		clitest.ExpectErr(t, r, "ManifestWork large in cluster cluster1: its payload is not whole in namespace cluster1: 11 of 12 chunks",
			missing, "write the payload again")
	})
}

// applyLarge writes, as the agent would, the status of work large applied:
// its payload staged and its count ConfigMaps reported.
func (fx *workCLIFixture) applyLarge(t *testing.T, count int) {
	t.Helper()
	w, _ := fx.workPayload(t, "large")
	cond := func(typ, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: w.Generation}
	}
	meta.SetStatusCondition(&w.Status.Conditions, cond(payloadv1alpha1.WorkPayloadStaged, payloadv1alpha1.ReasonPayloadVerified))
	meta.SetStatusCondition(&w.Status.Conditions, cond(workv1.WorkApplied, "AppliedManifestWorkComplete"))
	w.Status.ResourceStatus.Manifests = nil
	for i := range count {
		w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Ordinal: int32(i), Version: "v1", Kind: "ConfigMap", Resource: "configmaps",
				Namespace: "app", Name: fmt.Sprintf("cm-%02d", i)},
			Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: metav1.Now()}},
		})
	}
	require.NoError(t, fx.c.Status().Update(fx.ctx, w))
}

// waitProbe waits for the ReportDiff work that work diff writes for work
// name in cluster1.
func (fx *workCLIFixture) waitProbe(t *testing.T, name string) *workv1.ManifestWork {
	t.Helper()
	var probe *workv1.ManifestWork
	framework.Eventually(fx.ctx, t, pollTimeout, "the ReportDiff work of "+name, func(ctx context.Context) (bool, error) {
		list := &workv1.ManifestWorkList{}
		if err := fx.c.List(ctx, list, client.InNamespace("cluster1"), client.MatchingLabels{diff.OfLabel: name}); err != nil {
			return false, err
		}
		if len(list.Items) != 1 {
			return false, nil
		}
		probe = &list.Items[0]
		return true, nil
	})
	return probe
}

// reportDiff writes, as the agent would, the report of a ReportDiff work
// of count ConfigMaps, of which ConfigMap changed differs.
func (fx *workCLIFixture) reportDiff(t *testing.T, probe *workv1.ManifestWork, count, changed int) {
	t.Helper()
	meta.SetStatusCondition(&probe.Status.Conditions, metav1.Condition{Type: workv1.WorkDiffReported, Status: metav1.ConditionTrue,
		Reason: workv1.DiffReasonDiffers, ObservedGeneration: probe.Generation})
	for i := range count {
		name := fmt.Sprintf("cm-%02d", i)
		c := metav1.Condition{Type: workv1.ManifestDiff, Status: metav1.ConditionFalse, Reason: workv1.DiffReasonNoDiff, LastTransitionTime: metav1.Now()}
		if i == changed {
			c.Status, c.Reason = metav1.ConditionTrue, workv1.DiffReasonDiffers
			c.Message = "--- live/ConfigMap app/" + name + "\n+++ applied/ConfigMap app/" + name + "\n-  v: old\n+  v: changed\n"
		}
		probe.Status.ResourceStatus.Manifests = append(probe.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Ordinal: int32(i), Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "app", Name: name},
			Conditions:   []metav1.Condition{c},
		})
	}
	require.NoError(t, fx.c.Status().Update(fx.ctx, probe))
}

// chunkGetter reads ManifestChunks of namespace ns as the hub's admin.
func (fx *workCLIFixture) chunkGetter(ns string) payload.Getter {
	return func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		obj := &payloadv1alpha1.ManifestChunk{}
		return obj, fx.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	}
}
