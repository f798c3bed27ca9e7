package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// TestChunkGetterAsksTheTunnelForASetsChunks reads a chunk from the
// cluster's namespace first, and asks the hub tunnel's server only for a
// chunk missing there of a work a set wrote; the server's refusals come
// back as API errors (404 a missing chunk, 403 a refusal).
func TestChunkGetterAsksTheTunnelForASetsChunks(t *testing.T) {
	data := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"app"}}` + "\n")
	ref := payloadv1alpha1.ChunkRef{Digest: payload.Digest(data), Size: int64(len(data))}
	inSet, err := payload.Object("team", payload.Chunk{Ref: ref, Data: data})
	require.NoError(t, err)
	name := payload.ChunkName(ref.Digest)
	own, err := payload.Object("cluster1", payload.Chunk{Ref: ref, Data: data})
	require.NoError(t, err)

	var asked []string
	answer := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(answer)
		if answer == http.StatusOK {
			_ = json.NewEncoder(w).Encode(&payloadv1alpha1.ManifestChunk{ObjectMeta: metav1.ObjectMeta{Name: inSet.Name}, Spec: inSet.Spec})
			return
		}
		_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: int32(answer), Reason: metav1.StatusReason(http.StatusText(answer)), Message: "refused by the test"})
	}))
	defer srv.Close()
	setChunks := &hubtunnel.ChunkClient{Host: srv.URL, Client: srv.Client()}

	bySet := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "web",
		Labels: workv1alpha1.OwnerLabels("team", "web"), Annotations: workv1alpha1.OwnerAnnotations("team", "web")}}
	direct := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "direct"}}
	ctx := context.Background()

	t.Run("a set's chunk missing from the cluster's namespace is read through the tunnel", func(t *testing.T) {
		asked, answer = nil, http.StatusOK
		r := &workReconciler{cluster: "cluster1", hubReader: fake.NewClientBuilder().WithScheme(apis.Scheme).Build(), setChunks: setChunks}
		got, err := r.chunkGetter(bySet)(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, []string{hubtunnel.ChunkPath("cluster1", "web", name)}, asked)
		out, err := payload.Decode(got, ref)
		require.NoError(t, err)
		assert.Equal(t, data, out)
	})
	t.Run("the cluster's own namespace comes first", func(t *testing.T) {
		asked = nil
		r := &workReconciler{cluster: "cluster1", hubReader: fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(own).Build(), setChunks: setChunks}
		_, err := r.chunkGetter(bySet)(ctx, name)
		require.NoError(t, err)
		assert.Empty(t, asked)
	})
	t.Run("a work of no set never asks the tunnel", func(t *testing.T) {
		asked = nil
		r := &workReconciler{cluster: "cluster1", hubReader: fake.NewClientBuilder().WithScheme(apis.Scheme).Build(), setChunks: setChunks}
		_, err := r.chunkGetter(direct)(ctx, name)
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
		assert.Empty(t, asked)
	})
	for code, is := range map[int]func(error) bool{http.StatusNotFound: apierrors.IsNotFound, http.StatusForbidden: apierrors.IsForbidden} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			answer = code
			r := &workReconciler{cluster: "cluster1", hubReader: fake.NewClientBuilder().WithScheme(apis.Scheme).Build(), setChunks: setChunks}
			_, err := r.chunkGetter(bySet)(ctx, name)
			require.Error(t, err)
			assert.True(t, is(err), "%v", err)
			assert.ErrorContains(t, err, "refused by the test")
		})
	}
}
