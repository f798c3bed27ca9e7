package payloadgc

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

const ns = "cluster1"

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// chunkOf returns the ManifestChunk of content, created age ago.
func chunkOf(t *testing.T, content string, age time.Duration) (*payloadv1alpha1.ManifestChunk, payload.Chunk) {
	t.Helper()
	data := []byte(content + "\n")
	c := payload.Chunk{Ref: payloadv1alpha1.ChunkRef{Digest: payload.Digest(data), Size: int64(len(data))}, Data: data}
	obj, err := payload.Object(ns, c)
	require.NoError(t, err)
	obj.CreationTimestamp = metav1.NewTime(now.Add(-age))
	return obj, c
}

// specListing is a ManifestWorkSpec whose ManifestPayload lists c.
func specListing(t *testing.T, c payload.Chunk) workv1.ManifestWorkSpec {
	t.Helper()
	m, err := payload.Manifest(payload.Reference("p", payloadv1alpha1.ManifestPayloadSpec{Size: c.Ref.Size, Manifests: 1, Chunks: []payloadv1alpha1.ChunkRef{c.Ref}}))
	require.NoError(t, err)
	return workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{m}}}
}

func TestReconcile(t *testing.T) {
	byWork, cWork := chunkOf(t, "work", time.Hour)
	bySet, cSet := chunkOf(t, "set", time.Hour)
	byRevision, cRevision := chunkOf(t, "revision", time.Hour)
	young, _ := chunkOf(t, "young", time.Minute)
	old, _ := chunkOf(t, "old", time.Hour)

	content, err := json.Marshal(revision.Content{Template: specListing(t, cRevision)})
	require.NoError(t, err)
	objs := []client.Object{byWork, bySet, byRevision, young, old,
		&workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: specListing(t, cWork)},
		&workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: specListing(t, cSet)}},
		&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s-1", Labels: map[string]string{revision.SetLabel: "s"}},
			Data: runtime.RawExtension{Raw: content}},
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).Build()
	r := &Reconciler{Client: c, Now: func() time.Time { return now }}

	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: ns}})
	require.NoError(t, err)
	assert.Equal(t, DefaultGracePeriod-time.Minute, res.RequeueAfter, "back when the young chunk's grace period ends")

	list := &payloadv1alpha1.ManifestChunkList{}
	require.NoError(t, c.List(context.Background(), list, client.InNamespace(ns)))
	var left []string
	for _, ch := range list.Items {
		left = append(left, ch.Name)
	}
	assert.ElementsMatch(t, []string{byWork.Name, bySet.Name, byRevision.Name, young.Name}, left, "only the old chunk nothing lists is deleted")
}
