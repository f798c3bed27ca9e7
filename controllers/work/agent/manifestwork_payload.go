package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
)

// watchChunks feeds c the works of cluster that wait for chunks when a chunk
// is created in the cluster's namespace, so that a payload applies as soon
// as its last chunk arrives. It watches the chunks' metadata only, and not
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
			if c := meta.FindStatusCondition(w.Status.Conditions, payloadv1alpha1.WorkPayloadStaged); c != nil && c.Reason == payloadv1alpha1.ReasonChunksMissing {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)})
			}
		}
		return out
	}
	created := predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc:  func(event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool { return false },
		DeleteFunc:  func(event.TypedDeleteEvent[*metav1.PartialObjectMetadata]) bool { return false },
		GenericFunc: func(event.TypedGenericEvent[*metav1.PartialObjectMetadata]) bool { return false },
	}
	if err := c.Watch(source.Kind(hub.GetCache(), chunk, handler.TypedEnqueueRequestsFromMapFunc(waiting), created)); err != nil {
		return fmt.Errorf("watch ManifestChunks: %w", err)
	}
	return nil
}

// missingChunksRetry caps the retry delay of a payload whose chunks are not
// all on the hub yet: they are being written.
const missingChunksRetry = 5 * time.Second

// stagePayload replaces, in work.Spec, a ManifestPayload with the manifests
// of its chunks once every chunk is present on the hub and verified, and
// sets the work's PayloadStaged condition. It returns ok false when the work
// must not be applied now: then the cluster keeps what it applied for an
// earlier generation, and result says when to look again. restore puts the
// spec back as the hub has it, before the work is patched.
func (r *workReconciler) stagePayload(ctx context.Context, work *workv1.ManifestWork) (restore func(), result ctrl.Result, ok bool, err error) {
	restore = func() {}
	p, err := payload.Of(&work.Spec)
	if err != nil {
		// A user error that only a new spec mends: no retry.
		r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonInvalidPayload, err.Error())
		return restore, ctrl.Result{}, false, nil
	}
	if p == nil {
		return restore, ctrl.Result{}, true, nil
	}
	list, err := json.Marshal(p.Spec)
	if err != nil {
		return restore, ctrl.Result{}, false, fmt.Errorf("encode ManifestPayload: %w", err)
	}
	key := payload.Digest(list)
	manifests := r.payloads.get(work.Name, key)
	if manifests == nil {
		var progress payload.Progress
		get, staged := r.payloads.getter(work.Name, r.chunkGetter())
		manifests, progress, err = payload.Load(ctx, &p.Spec, get)
		var digestErr *payload.DigestError
		if errors.As(err, &digestErr) {
			delete(staged, digestErr.Chunk)
		}
		r.payloads.staged(work.Name, staged, err == nil && progress.Complete())
		switch {
		case errors.As(err, &digestErr):
			r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonChunkDigestMismatch,
				fmt.Sprintf("generation %d refused: %v; %s", work.Generation, err, r.running(work)))
			ctrl.LoggerFrom(ctx).Info("Refused a payload chunk", "chunk", digestErr.Chunk, "reason", digestErr.Reason)
			return restore, ctrl.Result{RequeueAfter: max(r.failures.When(client.ObjectKeyFromObject(work)), time.Second)}, false, nil
		case err != nil:
			return restore, ctrl.Result{}, false, err
		case !progress.Complete():
			msg := fmt.Sprintf("generation %d: %s; waiting for %v; %s", work.Generation, progress, progress.Missing, r.running(work))
			r.setPayloadStaged(work, metav1.ConditionFalse, payloadv1alpha1.ReasonChunksMissing, msg)
			return restore, ctrl.Result{RequeueAfter: min(r.failures.When(client.ObjectKeyFromObject(work)), missingChunksRetry)}, false, nil
		}
		r.payloads.put(work.Name, key, manifests)
	}
	r.setPayloadStaged(work, metav1.ConditionTrue, payloadv1alpha1.ReasonPayloadVerified,
		fmt.Sprintf("generation %d: all %d chunks (%d manifests, %d bytes) present and verified", work.Generation,
			len(p.Spec.Chunks), p.Spec.Manifests, p.Spec.Size))
	orig := work.Spec.Workload.Manifests
	work.Spec.Workload.Manifests = manifests
	return func() { work.Spec.Workload.Manifests = orig }, ctrl.Result{}, true, nil
}

// chunkGetter reads chunks from the hub around the session's cache, one at
// a time, so that the agent never holds a namespace's chunks in memory.
func (r *workReconciler) chunkGetter() payload.Getter {
	return func(ctx context.Context, name string) (*payloadv1alpha1.ManifestChunk, error) {
		chunk := &payloadv1alpha1.ManifestChunk{}
		err := r.hubReader.Get(ctx, types.NamespacedName{Namespace: r.cluster, Name: name}, chunk)
		return chunk, err
	}
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
