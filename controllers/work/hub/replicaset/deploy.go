package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/text"
)

// errForeign marks a ManifestWork that exists under the name the controller
// wants but belongs to something else.
var errForeign = errors.New("not created by this ManifestWorkReplicaSet")

// isForeign reports whether err is about a ManifestWork of someone else.
func isForeign(err error) bool { return errors.Is(err, errForeign) }

// listWorks returns the ManifestWorks of mwrs (workv1alpha1.OwnerLabels) by
// cluster (namespace).
func (r *Reconciler) listWorks(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	// The cache's own objects, not copies: a set of 10,000 clusters is
	// reconciled many times a second during a rollout. What the reconcile
	// changes it copies first (applyWork, relabel) and puts in the map in
	// the cached object's place.
	if err := r.Client.List(ctx, list, client.MatchingFields{ownerIndex: setKey(mwrs)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	works := make(map[string]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		// A hashed owner label is checked against the set's name, so that
		// a work naming another set is never taken for one of mwrs.
		if workv1alpha1.Owns(mwrs.Namespace, mwrs.Name, &list.Items[i]) {
			works[list.Items[i].Namespace] = &list.Items[i]
		}
	}
	// The works this controller wrote that the cache does not show yet
	// stand in for what it shows: otherwise the reconcile would create them
	// again (AlreadyExists, then a read) or update an older version (a
	// conflict).
	r.written.Overlay(setKey(mwrs), func(key types.NamespacedName) *workv1.ManifestWork {
		if mw := works[key.Namespace]; mw != nil && mw.Name == key.Name {
			return mw
		}
		return nil
	}, func(key types.NamespacedName, mw *workv1.ManifestWork) { works[key.Namespace] = mw })
	return works, nil
}

// setKey is a set's <namespace>/<name>: its works' ownerIndex value, the
// group of its works in Reconciler.written, and its reconcile request's
// String.
func setKey(mwrs *workv1alpha1.ManifestWorkReplicaSet) string {
	return client.ObjectKeyFromObject(mwrs).String()
}

// applyWork creates or updates the ManifestWork of cluster so that it has
// the desired spec, labels and annotations, and returns it.
func (r *Reconciler) applyWork(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet, cluster string,
	current *workv1.ManifestWork, d desired, now time.Time) (*workv1.ManifestWork, error) {
	var mw *workv1.ManifestWork
	if current == nil {
		mw = &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: mwrs.Name, Namespace: cluster}}
	} else {
		mw = current.DeepCopy()
	}
	if mw.Labels == nil {
		mw.Labels = map[string]string{}
	}
	if mw.Annotations == nil {
		mw.Annotations = map[string]string{}
	}
	for k, v := range workv1alpha1.OwnerLabels(mwrs.Namespace, mwrs.Name) {
		mw.Labels[k] = v
	}
	for k, v := range workv1alpha1.OwnerAnnotations(mwrs.Namespace, mwrs.Name) {
		mw.Annotations[k] = v
	}
	mw.Labels[workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey] = d.placement
	mw.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] = d.hash
	mw.Annotations[workv1alpha1.ManifestWorkSpecWrittenAnnotationKey] = now.UTC().Format(time.RFC3339)
	mw.Annotations[revision.HashAnnotation] = d.revision
	if d.takeOver != "" {
		mw.Annotations[workv1.TakeOverAnnotation] = d.takeOver
	} else {
		delete(mw.Annotations, workv1.TakeOverAnnotation)
	}
	mw.Spec = *d.spec.DeepCopy()
	if err := r.checkChunks(ctx, mwrs.Namespace, cluster, &mw.Spec); err != nil {
		return nil, err
	}
	if current == nil {
		if err := r.Client.Create(ctx, mw); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, r.existing(ctx, cluster, mwrs)
			}
			return nil, fmt.Errorf("create ManifestWork %s/%s: %w", cluster, mwrs.Name, err)
		}
		r.written.Record(setKey(mwrs), "", mw)
		return mw, nil
	}
	if err := r.Client.Update(ctx, mw); err != nil {
		if apierrors.IsConflict(err) {
			return nil, errStale
		}
		return nil, fmt.Errorf("update ManifestWork %s/%s: %w", cluster, mwrs.Name, err)
	}
	r.written.Record(setKey(mwrs), current.ResourceVersion, mw)
	return mw, nil
}

// The chunks of large payloads stay in the set's namespace, where the
// clusters' agents read them through the hub tunnel's server; their
// creation (metadata only) brings back the sets that wait for them.
// +kubebuilder:rbac:groups=work.kubectl-ocm.io,resources=manifestchunks,verbs=get;list;watch

// checkChunks returns an error naming the first chunk of spec's
// ManifestPayload, if it holds one, that the set's namespace from lacks or
// holds with a content that is not its name, so that a cluster's work is
// written only once its whole payload is there to be read. Each chunk is
// read whole and verified once (the controller remembers the UID it
// verified), then looked up by its metadata in the cache.
func (r *Reconciler) checkChunks(ctx context.Context, from, cluster string, spec *workv1.ManifestWorkSpec) error {
	p, err := payload.Of(spec)
	if err != nil {
		// The agent reports a bad payload on the work, where its author
		// looks for it.
		ctrl.LoggerFrom(ctx).V(2).Info("Writing a ManifestWork whose payload is not valid", "cluster", cluster, "reason", err.Error())
		return nil
	}
	if p == nil {
		return nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	for _, ref := range p.Spec.Chunks {
		name := payload.ChunkName(ref.Digest)
		key := client.ObjectKey{Namespace: from, Name: name}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(payloadv1alpha1.GroupVersion.WithKind("ManifestChunk"))
		if err := r.Client.Get(ctx, key, meta); err == nil {
			if uid, ok := r.verified.Load(key); ok && uid == meta.UID {
				continue
			}
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("payload of ManifestWork %s: read ManifestChunk %s/%s: %w", cluster, from, name, err)
		}
		// Not in the cache yet, or not verified: read it whole.
		chunk := &payloadv1alpha1.ManifestChunk{}
		if err := reader.Get(ctx, key, chunk); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("payload of ManifestWork %s: %w", cluster, &payload.MissingChunkError{Namespace: from, Chunk: name})
			}
			return fmt.Errorf("payload of ManifestWork %s: read ManifestChunk %s/%s: %w", cluster, from, name, err)
		}
		if _, err := payload.Decode(chunk, ref); err != nil {
			return fmt.Errorf("payload of ManifestWork %s: %w", cluster, err)
		}
		r.verified.Store(key, chunk.UID)
	}
	return nil
}

// deniedRetry is how often the controller tries again to write a
// ManifestWork the API server refused: a grant or a policy change that would
// let it through triggers no event.
const deniedRetry = time.Minute

// isDenied reports whether err is the API server refusing a ManifestWork
// write: an admission policy or RBAC (Forbidden) or validation (Invalid).
func isDenied(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err)
}

// errStale means the cache was behind the API server: the ManifestWork was
// created or changed since it was read; the next reconcile sees it.
var errStale = errors.New("the ManifestWork changed since it was read")

// isStale reports whether err is errStale, for patch.RetryStale.
func isStale(err error) bool { return errors.Is(err, errStale) }

// existing explains why the ManifestWork cluster/name could not be created:
// a work of this ManifestWorkReplicaSet the cache has not seen yet (stale),
// or a work of someone else (foreign). It reads the API server directly.
func (r *Reconciler) existing(ctx context.Context, cluster string, mwrs *workv1alpha1.ManifestWorkReplicaSet) error {
	name := mwrs.Name
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	mw := &workv1.ManifestWork{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
		return fmt.Errorf("get ManifestWork %s/%s: %w", cluster, name, err)
	}
	if workv1alpha1.Owns(mwrs.Namespace, mwrs.Name, mw) {
		return errStale
	}
	return fmt.Errorf("the ManifestWork %s/%s exists and is %w", cluster, name, errForeign)
}

// relabel points the placementname label of mw at placement when the
// cluster is now owned by another placement of the same
// ManifestWorkReplicaSet, and records rev, the hash of the set's current
// revision, on a work that holds its template but not the hash (one written
// before the set kept revisions); the spec is left alone. group is the
// set's (setKey).
func (r *Reconciler) relabel(ctx context.Context, group string, mw *workv1.ManifestWork, placement, rev string) (*workv1.ManifestWork, error) {
	if mw.Labels[workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey] == placement && mw.Annotations[revision.HashAnnotation] == rev {
		return mw, nil
	}
	updated := mw.DeepCopy()
	updated.Labels[workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey] = placement
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[revision.HashAnnotation] = rev
	if err := r.Client.Update(ctx, updated); err != nil {
		if apierrors.IsConflict(err) {
			return nil, errStale
		}
		return nil, fmt.Errorf("relabel ManifestWork %s/%s: %w", mw.Namespace, mw.Name, err)
	}
	r.written.Record(group, mw.ResourceVersion, updated)
	return updated, nil
}

// deleteWork deletes mw of the set group (setKey) in the background; a work
// already gone is fine.
func (r *Reconciler) deleteWork(ctx context.Context, group string, mw *workv1.ManifestWork) error {
	if !mw.DeletionTimestamp.IsZero() {
		return nil
	}
	err := r.Client.Delete(ctx, mw, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &mw.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete ManifestWork %s/%s: %w", mw.Namespace, mw.Name, err)
	}
	r.written.Forget(group, client.ObjectKeyFromObject(mw))
	return nil
}

// joinLimited joins up to five messages, sorted, and counts the rest.
func joinLimited(msgs []string) string { return text.JoinLimited(msgs, "; ", 5) }
