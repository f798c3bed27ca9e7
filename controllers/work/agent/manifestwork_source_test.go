package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	pkgruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// alive counts the objects of ptrs the garbage collector has not freed.
func alive[T any](ptrs []weak.Pointer[T]) int {
	runtime.GC()
	n := 0
	for _, p := range ptrs {
		if p.Value() != nil {
			n++
		}
	}
	return n
}

// mixedPayload is 60 ConfigMaps of 64 KiB, with a Namespace at the end, a
// CustomResourceDefinition of 2.5 MiB (over two chunks) in the middle and
// a Deployment near the start, so that the apply order differs from the
// payload's.
func mixedPayload(t *testing.T) []workv1.Manifest {
	t.Helper()
	var out []workv1.Manifest
	add := func(obj map[string]any) {
		raw, err := json.Marshal(obj)
		require.NoError(t, err)
		out = append(out, workv1.Manifest{RawExtension: pkgruntime.RawExtension{Raw: raw}})
	}
	for i := range 60 {
		switch i {
		case 3:
			add(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "app", "namespace": "ns"}})
		case 30:
			add(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": "things.example.com"},
				"spec":     map[string]any{"description": strings.Repeat(fmt.Sprintf("crd %d;", i), (5<<19)/6)}})
		}
		add(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", i), "namespace": "ns"},
			"data": map[string]any{"v": strings.Repeat(fmt.Sprintf("cm-%02d;", i), (64<<10)/6)}})
	}
	add(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns"}})
	return out
}

// TestPayloadManifestsStream checks that a large payload reaches the apply
// in apply order, one manifest at a time, with at most two chunks and one
// decoded manifest alive at once: memory that grew with the payload (its
// manifests, decoded or not, all held while they are applied) fails it.
func TestPayloadManifestsStream(t *testing.T) {
	ctx := context.Background()
	ms := mixedPayload(t)
	ref, chunks, err := payload.Split("p", ms)
	require.NoError(t, err)
	require.Greater(t, len(chunks), 60)
	h := &hubChunks{objs: map[string]*payloadv1alpha1.ManifestChunk{}}
	for _, c := range chunks {
		obj, err := payload.Object("cluster1", c)
		require.NoError(t, err)
		h.objs[c.Name()] = obj
	}
	c := &payloadCache{store: newStore(t, t.TempDir(), DefaultPayloadCacheSize)}

	// Every chunk read, from the hub or the disk, is followed until the
	// garbage collector frees it.
	var buffers []weak.Pointer[byte]
	stored := storedReader(c.store, h.get)
	read := func(ctx context.Context, i int, ref payloadv1alpha1.ChunkRef) ([]byte, error) {
		data, err := stored(ctx, i, ref)
		if len(data) > 0 {
			buffers = append(buffers, weak.Make(&data[0]))
		}
		return data, err
	}
	staged, progress, err := scanPayload(ctx, "key", &ref.Spec, read)
	require.NoError(t, err)
	require.True(t, progress.Complete())
	assert.LessOrEqual(t, alive(buffers), 1, "the first pass holds no chunk once done")
	assert.Equal(t, len(chunks), h.reads, "the first pass reads each chunk from the hub once")

	buffers = nil
	src := &payloadManifests{spec: &ref.Spec, staged: staged, read: read}
	var handed []weak.Pointer[unstructured.Unstructured]
	var order []int32
	mostManifests, mostChunks := 0, 0
	require.NoError(t, src.Each(ctx, func(m *apply.Manifest) {
		require.NoError(t, m.Err)
		mostManifests = max(mostManifests, alive(handed))
		mostChunks = max(mostChunks, alive(buffers))
		handed = append(handed, weak.Make(m.Object))
		order = append(order, m.Ordinal)
	}))
	assert.Equal(t, len(chunks), h.reads, "the apply passes read the chunks from disk, not the hub")
	assert.LessOrEqual(t, mostManifests, 1, "manifests handed to the apply before are freed")
	assert.LessOrEqual(t, mostChunks, 2, "chunks read before are freed")

	// The order is the one a small work's manifests are applied in.
	var want []int32
	require.NoError(t, manifestsOf(&workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: ms}}).Each(ctx, func(m *apply.Manifest) {
		want = append(want, m.Ordinal)
	}))
	assert.Equal(t, want, order)
	assert.Equal(t, len(ms), src.Len())
}

func TestSettleKeepsWhatTheStatusNeeds(t *testing.T) {
	live := func() *unstructured.Unstructured {
		u := object(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: ns, uid: u1, resourceVersion: \"7\", "+
			"ownerReferences: [{apiVersion: work.open-cluster-management.io/v1, kind: AppliedManifestWork, name: h-w, uid: a1}]}\n"+
			"spec: {replicas: 2}\nstatus: {readyReplicas: 2}\n")
		return u
	}
	m := workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "app", Namespace: "ns"}
	id := workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "app", Namespace: "ns"}
	tests := []struct {
		name     string
		configs  []workv1.ManifestConfigOption
		wantLive bool
	}{
		{"no rules: metadata only", nil, false},
		{"a feedback rule reads the object", []workv1.ManifestConfigOption{{ResourceIdentifier: id,
			FeedbackRules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}}}, true},
		{"a condition rule reads the object", []workv1.ManifestConfigOption{{ResourceIdentifier: id,
			ConditionRules: []workv1.ConditionRule{{Type: workv1.WellKnownConditionsType}}}}, true},
		{"another manifest's rule", []workv1.ManifestConfigOption{{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "other", Namespace: "ns"},
			FeedbackRules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := &workv1.ManifestWork{Spec: workv1.ManifestWorkSpec{ManifestConfigs: tt.configs}}
			res := apply.Result{Meta: m, GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Object: live(), Before: live()}
			settle(work, &res)
			assert.Nil(t, res.Before)
			require.NotNil(t, res.Object)
			assert.Equal(t, "u1", string(res.Object.GetUID()))
			assert.Equal(t, "7", res.Object.GetResourceVersion())
			assert.Equal(t, []metav1.OwnerReference{{APIVersion: "work.open-cluster-management.io/v1", Kind: "AppliedManifestWork", Name: "h-w", UID: "a1"}}, res.Object.GetOwnerReferences())
			assert.Equal(t, "Deployment", res.Object.GetKind())
			_, hasStatus := res.Object.Object["status"]
			assert.Equal(t, tt.wantLive, hasStatus)
			assert.Equal(t, workv1.AppliedManifestResourceMeta{ResourceIdentifier: id, Version: "v1", UID: "u1"}, res.Resource())
		})
	}

	res := apply.Result{Meta: m}
	settle(&workv1.ManifestWork{}, &res)
	assert.Nil(t, res.Object, "a missing object stays missing")
}
