package replicaset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/payloadgc"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/hub/replicaset"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// largeTemplate is the payload of 40 ConfigMaps of 64 KiB, 2.5 MiB in all,
// the ConfigMap of index changed holding other data: its chunks and the one
// manifest that stands for them.
func largeTemplate(t *testing.T, changed int) ([]payload.Chunk, workv1.Manifest) {
	t.Helper()
	manifests := make([]workv1.Manifest, 40)
	for i := range manifests {
		seed := fmt.Sprintf("cm-%02d", i)
		if i == changed {
			seed += "-changed"
		}
		raw := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%02d","namespace":"app"},"data":{"v":%q}}`,
			i, strings.Repeat(seed, (64<<10)/len(seed)))
		manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}
	}
	ref, chunks, err := payload.Split("app", manifests)
	require.NoError(t, err)
	m, err := payload.Manifest(ref)
	require.NoError(t, err)
	return chunks, m
}

// reconcileErrors returns controller-runtime's count of the failed
// reconciles of the ManifestWorkReplicaSet controller in this process.
func reconcileErrors(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == replicaset.ControllerName {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// TestReplicaSetLargePayload rolls a template whose manifests are a large
// payload out to clusters: the chunks stay in the set's namespace, where
// the agents read them through the hub tunnel's server
// (TestSetChunksServedToPlacedAgents); the controller writes no work while
// a chunk is missing there, and goes on as soon as it is created. The
// collector keeps what a kept revision lists, so that undo brings back an
// earlier payload, and frees the copies an earlier release made in the
// clusters' namespaces that nothing there lists.
func TestReplicaSetLargePayload(t *testing.T) {
	framework.SkipIfShort(t)
	s := setup(t)
	const ns, name = "large", "large"
	for _, c := range []string{c1, c2} {
		s.cluster(t, c, nil)
	}
	s.placement(t, ns, "p", group{clusters: []string{c1, c2}})

	chunks, m := largeTemplate(t, -1)
	require.Greater(t, len(chunks), 10)
	_, err := payload.Write(s.ctx, s.admin, ns, chunks[1:])
	require.NoError(t, err)
	mwrs := newMWRS(ns, name, "p", clusterv1alpha1.RolloutStrategy{}, "")
	mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{m}
	errorsBefore := reconcileErrors(t)
	kit.Must(t, "create", s.admin.Create(s.ctx, mwrs))

	// Each failed reconcile doubles the set's backoff, from 5 ms: after 13,
	// the next retry is 20 s away.
	const failures = 13
	t.Run("no work is written while a chunk is missing", func(t *testing.T) {
		framework.Eventually(s.ctx, t, 2*pollTimeout, fmt.Sprintf("%d failed reconciles of the set", failures), func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || len(works) > 0 {
				return false, fmt.Errorf("ManifestWorks written while a chunk is missing: %v, %w", clustersOf(works), err)
			}
			return reconcileErrors(t)-errorsBefore >= failures, nil
		})
		works, err := s.works(s.ctx, ns, name)
		require.NoError(t, err)
		assert.Empty(t, works, "no ManifestWork while a chunk is missing")
		got := &workv1alpha1.ManifestWorkReplicaSet{}
		require.NoError(t, s.admin.Get(s.ctx, client.ObjectKeyFromObject(mwrs), got))
		c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied)
		require.NotNil(t, c, "the set says why it writes no work")
		assert.Equal(t, metav1.ConditionFalse, c.Status)
		assert.Equal(t, payloadv1alpha1.ReasonChunksMissing, c.Reason)
		assert.Contains(t, c.Message, chunks[0].Name(), "the message names the missing chunk")
	})

	t.Run("the set goes on as soon as the chunk is created", func(t *testing.T) {
		_, err := payload.Write(s.ctx, s.admin, ns, chunks[:1])
		require.NoError(t, err)
		// Half the backoff: the chunk's creation brings the set back.
		framework.Eventually(s.ctx, t, 10*time.Second, "ManifestWorks on both clusters", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			return len(works) == 2, err
		})
	})

	t.Run("the chunks stay in the set's namespace, one copy", func(t *testing.T) {
		works := s.waitWorks(t, ns, name, c1, c2)
		for c, w := range works {
			assert.JSONEq(t, string(m.Raw), string(w.Spec.Workload.Manifests[0].Raw), "the work of %s", c)
			p, err := payload.Of(&w.Spec)
			require.NoError(t, err)
			got, progress, err := payload.Load(s.ctx, &p.Spec, func(ctx context.Context, n string) (*payloadv1alpha1.ManifestChunk, error) {
				obj := &payloadv1alpha1.ManifestChunk{}
				return obj, s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, obj)
			})
			require.NoError(t, err)
			assert.True(t, progress.Complete(), "%s: %s", c, progress)
			assert.Len(t, got, 40)
			have, err := kit.ChunkNames(s.ctx, s.admin, c)
			require.NoError(t, err)
			assert.Empty(t, have, "chunks in the namespace of %s", c)
		}
	})

	t.Run("a new template writes only the chunks that changed, in the set's namespace", func(t *testing.T) {
		before, err := kit.ChunkNames(s.ctx, s.admin, ns)
		require.NoError(t, err)
		next, m2 := largeTemplate(t, 17)
		want, err := payload.Of(&workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m2}}})
		require.NoError(t, err)
		written, err := payload.Write(s.ctx, s.admin, ns, next)
		require.NoError(t, err)
		require.Equal(t, int64(1), written.Chunks, "one ConfigMap changed")
		kit.Must(t, "get", s.admin.Get(s.ctx, client.ObjectKeyFromObject(mwrs), mwrs))
		mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{m2}
		kit.Must(t, "update template", s.admin.Update(s.ctx, mwrs))
		s.poll(t, "the new template on both clusters", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || len(works) != 2 {
				return false, err
			}
			for _, w := range works {
				if p, err := payload.Of(&w.Spec); err != nil || p == nil || !slices.Equal(p.Spec.Chunks, want.Spec.Chunks) {
					return false, err
				}
			}
			return true, nil
		})
		after, err := kit.ChunkNames(s.ctx, s.admin, ns)
		require.NoError(t, err)
		added := 0
		for n := range after {
			if !before[n] {
				added++
			}
		}
		assert.Equal(t, 1, added, "chunks added to %s", ns)
		for _, c := range []string{c1, c2} {
			have, err := kit.ChunkNames(s.ctx, s.admin, c)
			require.NoError(t, err)
			assert.Empty(t, have, "chunks in the namespace of %s", c)
		}
	})
	t.Run("chunks nothing lists are collected after their grace period", func(t *testing.T) {
		orphan := payload.Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: payload.Digest([]byte("orphan\n")), Size: 7}, Data: []byte("orphan\n")}
		_, err := payload.Write(s.ctx, s.admin, ns, []payload.Chunk{orphan})
		require.NoError(t, err)
		// The first template's chunk of ConfigMap 17 is listed by the set's
		// first revision in its namespace, and by nothing in the clusters'.
		old := chunks[17].Name()
		// An earlier release copied the first template's chunks into
		// cluster1's namespace.
		_, err = payload.Write(s.ctx, s.admin, c1, chunks)
		require.NoError(t, err)
		hubtest.RunControllers(t, s.hub, 2, func(mgr ctrl.Manager) error {
			return (&payloadgc.Reconciler{Client: mgr.GetClient(), GracePeriod: 2 * time.Second}).SetupWithManager(mgr)
		})
		s.poll(t, "the unlisted chunks collected", func(ctx context.Context) (bool, error) {
			inSet, err := kit.ChunkNames(ctx, s.admin, ns)
			if err != nil {
				return false, err
			}
			inCluster, err := kit.ChunkNames(ctx, s.admin, c1)
			return !inSet[orphan.Name()] && !inCluster[old], err
		})
		inSet, err := kit.ChunkNames(s.ctx, s.admin, ns)
		require.NoError(t, err)
		assert.True(t, inSet[old], "a chunk a kept revision lists stays, for undo")
		works, err := s.works(s.ctx, ns, name)
		require.NoError(t, err)
		// cluster1 keeps the earlier copies its work lists (its agent
		// reads its own namespace first), and nothing else.
		p, err := payload.Of(&works[c1].Spec)
		require.NoError(t, err)
		have, err := kit.ChunkNames(s.ctx, s.admin, c1)
		require.NoError(t, err)
		assert.Len(t, have, len(p.Spec.Chunks)-1, "%s keeps the copies its work lists, all but the changed chunk", c1)
		for n := range have {
			assert.Contains(t, payload.Listed(&works[c1].Spec), n, "%s keeps only chunks its work lists", c1)
		}
	})

	t.Run("work get shows the payload of the set and of each cluster's work", func(t *testing.T) {
		r := s.ocm.Run(s.ctx, "work", "get", name, "--replicaset", "-n", ns)
		clitest.ExpectOK(t, r, "PAYLOAD", "2.5 MiB in ")
		// No agent stages the payload here.
		for _, c := range []string{c1, c2} {
			if row := clitest.Row(r.Out, c); !strings.Contains(strings.Join(row, " "), "staging the payload: 2.5 MiB in") {
				t.Errorf("the row of %s does not say the payload is being staged: %v\n%s", c, row, r.Out)
			}
		}
	})

	t.Run("a gated undo brings the first payload back, its chunks kept by the revision", func(t *testing.T) {
		first, err := payload.Of(&workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m}}})
		require.NoError(t, err)
		s.poll(t, "gate the set, whose gates need a progressive rollout", func(ctx context.Context) (bool, error) {
			if err := s.admin.Get(ctx, client.ObjectKeyFromObject(mwrs), mwrs); err != nil {
				return false, err
			}
			if mwrs.Annotations == nil {
				mwrs.Annotations = map[string]string{}
			}
			mwrs.Annotations[rolloutv1alpha1.GatesAnnotation] = string(rolloutv1alpha1.GateBefore)
			mwrs.Spec.PlacementRefs[0].RolloutStrategy = clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive}
			return true, s.admin.Update(ctx, mwrs)
		})
		// The controller may write the set meanwhile: the undo asks to run it again.
		var r clitest.Result
		s.poll(t, "undo", func(ctx context.Context) (bool, error) {
			r = s.ocm.Run(ctx, "work", "rollout", "undo", name, "-n", ns)
			return r.Err == nil, nil
		})
		clitest.ExpectOK(t, r, "rolled back from revision 2 to revision 1", "and its gates")
		// The undo is a new revision, held at its gate as any change.
		s.poll(t, "the undo waiting at its gate", func(ctx context.Context) (bool, error) {
			set := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := s.admin.Get(ctx, client.ObjectKeyFromObject(mwrs), set); err != nil {
				return false, err
			}
			if rolledOutReason(rolloutv1alpha1.ReasonAwaitingApproval, "approval before stage")(set) {
				return true, nil
			}
			return false, fmt.Errorf("generation %d, conditions %+v", set.Generation, set.Status.Conditions)
		})
		works, err := s.works(s.ctx, ns, name)
		require.NoError(t, err)
		for c, w := range works {
			p, err := payload.Of(&w.Spec)
			require.NoError(t, err)
			assert.False(t, slices.Equal(p.Spec.Chunks, first.Spec.Chunks), "%s got the first payload before the gate opened", c)
		}
		clitest.ExpectOK(t, s.ocm.Run(s.ctx, "work", "rollout", "approve", name, "-n", ns), "approved by")
		s.poll(t, "the first payload on both clusters, whole", func(ctx context.Context) (bool, error) {
			works, err := s.works(ctx, ns, name)
			if err != nil || len(works) != 2 {
				return false, err
			}
			for c, w := range works {
				if p, err := payload.Of(&w.Spec); err != nil || p == nil || !slices.Equal(p.Spec.Chunks, first.Spec.Chunks) {
					return false, err
				}
				have, err := kit.ChunkNames(ctx, s.admin, ns)
				if err != nil {
					return false, err
				}
				for _, ref := range first.Spec.Chunks {
					if !have[payload.ChunkName(ref.Digest)] {
						return false, fmt.Errorf("the set's namespace lacks chunk %s of the work of %s", payload.ChunkName(ref.Digest), c)
					}
				}
			}
			return true, nil
		})
	})
}
