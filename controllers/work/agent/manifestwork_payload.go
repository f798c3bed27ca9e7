package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// watchChunks feeds c the works of cluster that wait for chunks, missing or
// refused for their content, when a chunk is created in the cluster's
// namespace or its content changes, so that a payload applies as soon as
// its last chunk arrives or a refused one is written again. It watches the chunks' metadata only, and not
// at all on a hub that does not serve ManifestChunks (a hub older than the
// agent), whose works then wait for their retry.
func watchChunks(c controller.Controller, hub cluster.Cluster, works client.Reader, clusterName string) error {
	gvk := payloadv1alpha1.GroupVersion.WithKind("ManifestChunk")
	if _, err := hub.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return nil
		}
		return fmt.Errorf("look up ManifestChunks on the hub: %w", err)
	}
	chunk := &metav1.PartialObjectMetadata{}
	chunk.SetGroupVersionKind(gvk)
	waiting := func(ctx context.Context, _ *metav1.PartialObjectMetadata) []reconcile.Request {
		list := &workv1.ManifestWorkList{}
		if err := works.List(ctx, list, client.InNamespace(clusterName)); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			w := &list.Items[i]
			if c := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged); c != nil && (c.Reason == payloadv1alpha1.ReasonChunksMissing || c.Reason == payloadv1alpha1.ReasonChunkDigestMismatch) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)})
			}
		}
		return out
	}
	written := predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc: func(e event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool {
			return e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration()
		},
		DeleteFunc:  func(event.TypedDeleteEvent[*metav1.PartialObjectMetadata]) bool { return false },
		GenericFunc: func(event.TypedGenericEvent[*metav1.PartialObjectMetadata]) bool { return false },
	}
	if err := c.Watch(source.Kind(hub.GetCache(), chunk, handler.TypedEnqueueRequestsFromMapFunc(waiting), written)); err != nil {
		return fmt.Errorf("watch ManifestChunks: %w", err)
	}
	return nil
}

// missingChunksRetry caps the retry delay of a payload whose chunks are not
// all on the hub yet: they are being written.
const missingChunksRetry = 5 * time.Second

// stagePayload returns the manifests of work to apply: those of its spec,
// or, when its one manifest is a ManifestPayload, the payload's, once every
// chunk is present and verified; it sets the work's PayloadStaged
// condition. It returns ok false when the work must not be applied now:
// then the cluster keeps what it applied for an earlier generation, and
// result says when to look again. The work's spec is left as the hub has
// it.
func (r *workReconciler) stagePayload(ctx context.Context, work *workv1.ManifestWork) (_ manifestSource, result ctrl.Result, ok bool, err error) {
	p, err := payload.Of(&work.Spec)
	if err != nil {
		// A user error that only a new spec mends: no retry.
		r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonInvalidPayload, err.Error())
		return nil, ctrl.Result{}, false, nil
	}
	if p == nil {
		return manifestsOf(&work.Spec), ctrl.Result{}, true, nil
	}
	list, err := json.Marshal(p.Spec)
	if err != nil {
		return nil, ctrl.Result{}, false, fmt.Errorf("encode ManifestPayload: %w", err)
	}
	key := payload.Digest(list)
	read := r.chunkReader(work)
	staged := r.payloads.get(work.Name, key)
	if staged == nil {
		r.payloads.staging(work.Name, &p.Spec)
		var progress payload.Progress
		staged, progress, err = scanPayload(ctx, key, &p.Spec, read)
		var digestErr *payload.DigestError
		switch {
		case errors.As(err, &digestErr):
			r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonChunkDigestMismatch,
				fmt.Sprintf("generation %d refused: %v; %s", work.Generation, err, r.running(work)))
			ctrl.LoggerFrom(ctx).Info("Refused a payload chunk", "chunk", digestErr.Chunk, "reason", digestErr.Reason)
			return nil, ctrl.Result{RequeueAfter: max(r.failures.When(client.ObjectKeyFromObject(work)), time.Second)}, false, nil
		case err != nil:
			// The hub refused a chunk, or could not be reached: said on
			// the work, and tried again with its backoff.
			r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonChunkUnreadable,
				fmt.Sprintf("generation %d: %v; %s", work.Generation, err, r.running(work)))
			return nil, ctrl.Result{}, false, err
		case !progress.Complete():
			msg := fmt.Sprintf("generation %d: %s; waiting for %v; %s", work.Generation, progress, progress.Missing, r.running(work))
			r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonChunksMissing, msg)
			return nil, ctrl.Result{RequeueAfter: min(r.failures.When(client.ObjectKeyFromObject(work)), missingChunksRetry)}, false, nil
		}
		r.payloads.put(work.Name, staged)
	}
	r.setPayloadStaged(work, metav1.ConditionTrue, payloadv1alpha1.ReasonPayloadVerified,
		fmt.Sprintf("generation %d: all %d chunks (%d manifests, %d bytes) present and verified", work.Generation,
			len(p.Spec.Chunks), p.Spec.Manifests, p.Spec.Size))
	name := work.Name
	return &payloadManifests{spec: &p.Spec, staged: staged, read: read, failed: func() { r.payloads.invalidate(name) }}, ctrl.Result{}, true, nil
}

// scanPayload is the first pass over a payload: it reads and verifies
// every chunk with read and ranks each manifest in the apply order, one
// manifest at a time. It returns the staged payload when every chunk is
// present, and the progress.
func scanPayload(ctx context.Context, key string, spec *payloadv1alpha1.ManifestPayloadSpec, read payload.ChunkReader) (*stagedPayload, payload.Progress, error) {
	ranks := make([]int32, 0, min(spec.Manifests, 1<<16))
	index, progress, err := payload.Scan(ctx, spec, read, func(ordinal int, raw []byte) error {
		ranks = append(ranks, int32(apply.ParseManifest(int32(ordinal), raw).Rank()))
		return nil
	})
	if err != nil || index == nil {
		return nil, progress, err
	}
	if int64(index.Manifests()) != spec.Manifests {
		return nil, progress, fmt.Errorf("the payload holds %d manifests, its ManifestPayload lists %d", index.Manifests(), spec.Manifests)
	}
	return newStagedPayload(key, index, ranks), progress, nil
}

// chunkReader reads the chunks of work's payload from the agent's store
// on disk, and from the hub (chunkGetter) those the store does not have.
func (r *workReconciler) chunkReader(work *workv1.ManifestWork) payload.ChunkReader {
	return storedReader(r.payloads.chunkStore(), r.chunkGetter(work))
}

// storedReader reads each chunk from store, and from hub when store does
// not have it or its copy fails its check; it keeps in store each chunk
// read from hub once verified.
func storedReader(store *chunkStore, hub payload.Getter) payload.ChunkReader {
	return func(ctx context.Context, _ int, ref payloadv1alpha1.ChunkRef) ([]byte, error) {
		data, err := store.read(ref)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("A payload chunk kept on disk failed its check; reading it from the hub again", "reason", err.Error())
		}
		if data != nil {
			return data, nil
		}
		chunk, err := hub(ctx, payload.ChunkName(ref.Digest))
		if err != nil {
			return nil, err
		}
		if data, err = payload.Decode(chunk, ref); err != nil {
			return nil, err
		}
		if err := store.put(chunk); err != nil {
			ctrl.LoggerFrom(ctx).V(2).Info("Not keeping a payload chunk on disk", "reason", err.Error())
		}
		return data, nil
	}
}

// chunkGetter reads the chunks of work's payload from the hub around the
// session's cache, one at a time, so that the agent never holds a
// namespace's chunks in memory. It reads the cluster's namespace first;
// a chunk not there, of a work a ManifestWorkReplicaSet wrote, is read from
// the set's namespace through the hub tunnel's server
// (hubtunnel.ChunkPath), which answers this cluster's agent only while the
// set places work on the cluster and lists the chunk.
func (r *workReconciler) chunkGetter(work *workv1.ManifestWork) payload.Getter {
	_, _, bySet := workv1alpha1.OwnerOf(work)
	return func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		chunk := &payloadv1alpha1.ManifestChunk{}
		err := r.hubReader.Get(ctx, types.NamespacedName{Namespace: r.cluster, Name: name}, chunk)
		if !apierrors.IsNotFound(err) || !bySet || r.setChunks == nil {
			return chunk, err
		}
		return r.setChunks.Get(ctx, r.cluster, work.Name, name)
	}
}

// payloadUnreadable reports a payload that could not be read again while
// its manifests were being applied (a chunk gone from the hub and not kept
// on disk, or changed since it was verified): PayloadStaged turns False
// and the error is returned, so that the work is tried again with its
// backoff and the next reconcile reads and verifies the whole payload
// again. The manifests applied before it are of the generation that was
// verified whole.
func (r *workReconciler) payloadUnreadable(work *workv1.ManifestWork, err error) error {
	reason := payloadv1alpha1.ReasonChunksMissing
	var digestErr *payload.DigestError
	if errors.As(err, &digestErr) {
		reason = payloadv1alpha1.ReasonChunkDigestMismatch
	}
	r.setPayloadStaged(work, metav1.ConditionFalse, reason,
		fmt.Sprintf("generation %d: applying it stopped: %v; it is read and verified again", work.Generation, err))
	return fmt.Errorf("read the payload of ManifestWork %s again: %w", work.Name, err)
}

// running says which generation of the work the cluster runs.
func (r *workReconciler) running(work *workv1.ManifestWork) string {
	if c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied); c != nil && c.ObservedGeneration > 0 {
		return fmt.Sprintf("the cluster keeps generation %d", c.ObservedGeneration)
	}
	return "nothing is applied until it is complete"
}

// setPayloadStaged sets the work's PayloadStaged condition.
func (r *workReconciler) setPayloadStaged(work *workv1.ManifestWork, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{
		Type: payloadv1alpha1.WorkPayloadStaged, Status: status, Reason: reason, Message: message,
		ObservedGeneration: work.Generation,
	})
}
