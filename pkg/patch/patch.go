// Package patch writes the changes a reconciler made to an object back to
// the API server, in the manner of cluster-api's patch helper: take a
// baseline with NewHelper, change the object, then call Patch once.
//
// Patch sends only what changed: a JSON merge patch of metadata and spec,
// and one of the status subresource, each computed from the baseline and
// skipped when that part did not change. Every patch carries the
// resourceVersion it was computed against (optimistic locking), so a write
// made by someone else in between is never overwritten unseen.
//
// The rule for a conflict: Patch re-reads the object and looks at what the
// other writer changed since the baseline.
//
//   - When it only added what neither the baseline nor this reconcile holds
//     (a condition of another type, a finalizer, a label, any field both
//     lack) or made the same change as this reconcile, Patch keeps those
//     additions and sends this reconcile's changes again on top: conditions
//     are merged by type (ours replace ours, another writer's are kept),
//     finalizers by value.
//   - Any other change (a condition, a field or a finalizer the reconcile
//     read changed or removed) is returned as the conflict
//     (apierrors.IsConflict reports true), and the controller requeues and
//     decides again on fresh data: re-applying a change computed from an
//     older read could undo a newer decision, e.g. when the cache has not
//     yet seen the controller's own previous write.
//
// A conflict is also returned when the re-read object does not move on
// within a short backoff, e.g. while a cache is behind.
package patch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// conflictBackoff paces the re-reads after a conflict: they give an informer
// cache time to see the write that caused the conflict, which it usually
// does within milliseconds. The delays double from 2ms (2, 4, 8 … 1024ms,
// about 2s in all), so that a reconcile waits little longer than its cache;
// a re-read that finds the same resourceVersion costs a cache lookup.
var conflictBackoff = wait.Backoff{Duration: 2 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 10}

// Helper patches the changes made to one object since NewHelper.
type Helper struct {
	client client.Client
	base   client.Object
	// sentSpec and sentStatus are whether the last Patch wrote metadata
	// and spec, and the status subresource.
	sentSpec, sentStatus bool
}

// NewHelper takes a copy of obj as the baseline of later patches. c both
// writes the patches and re-reads the object after a conflict; a client that
// reads from a cache works, as Patch waits for the cache to move on.
func NewHelper(obj client.Object, c client.Client) *Helper {
	return &Helper{client: c, base: obj.DeepCopyObject().(client.Object)}
}

// HasChanges reports whether obj differs from the baseline in metadata,
// spec or status, i.e. whether Patch would send anything.
func (h *Helper) HasChanges(obj client.Object) (bool, error) {
	if equality.Semantic.DeepEqual(h.base, obj) {
		return false, nil
	}
	before, after, err := h.documents(obj)
	if err != nil {
		return false, err
	}
	for _, p := range parts {
		if !reflect.DeepEqual(p.of(before), p.of(after)) {
			return true, nil
		}
	}
	return false, nil
}

// Patch writes the changes made to obj since the baseline: metadata and
// spec first, then status, each only when it changed, and retries conflicts
// as the package documentation describes. obj must be the object (or a copy
// of the object) given to NewHelper. On success obj holds what the API
// server returned, including what other writers set; on error obj is left
// as it was. A NotFound error is returned wrapped: callers that expect the
// object to go away test it with apierrors.IsNotFound.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	h.sentSpec, h.sentStatus = false, false
	if equality.Semantic.DeepEqual(h.base, obj) {
		return nil // the cheap test first: objects can be large
	}
	before, after, err := h.documents(obj)
	if err != nil {
		return err
	}
	current, sent := before, client.Object(nil)
	for _, p := range parts {
		if reflect.DeepEqual(p.of(before), p.of(after)) {
			continue
		}
		resp, wrote, err := h.patchPart(ctx, obj, p, before, after, current)
		if err != nil {
			return fmt.Errorf("patch %s of %s: %w", p.name, h.describe(obj), err)
		}
		if wrote && p.name == statusPart {
			h.sentStatus = true
		} else if wrote {
			h.sentSpec = true
		}
		if resp != nil {
			sent = resp
			if current, err = document(resp); err != nil {
				return err
			}
		}
	}
	if sent != nil {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(sent).Elem())
	}
	return nil
}

// SentStatus reports whether the last Patch wrote the status subresource:
// false when status did not change, when another writer (or the
// reconciler's own earlier write, which a stale cache hid) had already made
// the same change, found after a conflict, or when Patch failed. A
// reconciler that reports a change (an event) does so only when its own
// write made it, so that it does not report one change twice.
func (h *Helper) SentStatus() bool { return h.sentStatus }

// SentSpec is SentStatus for metadata and spec.
func (h *Helper) SentSpec() bool { return h.sentSpec }

// patchPart sends the patch of one part, computed against current (the
// object as last known from the API server), and retries conflicts. It
// returns the object as the API server last returned it: the response to the
// patch, or the object read after a conflict when nothing was left to send;
// nil when it sent nothing and read nothing. wrote reports whether a patch
// was accepted.
func (h *Helper) patchPart(ctx context.Context, obj client.Object, p part, before, after, current map[string]any) (latest client.Object, wrote bool, err error) {
	backoff := conflictBackoff
	for {
		desired, err := rebase(p, before, after, current)
		if overlap := (*overlapError)(nil); errors.As(err, &overlap) {
			return nil, false, h.conflict(obj, overlap)
		}
		if err != nil {
			return nil, false, err
		}
		data, err := mergePatch(p.of(current), desired, resourceVersion(current))
		if err != nil || data == nil {
			return latest, false, err
		}
		target := obj.DeepCopyObject().(client.Object)
		err = p.send(ctx, h.client, target, client.RawPatch(types.MergePatchType, data))
		if err == nil {
			return target, true, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, false, err
		}
		if latest, err = h.reread(ctx, obj, resourceVersion(current), &backoff, err); err != nil {
			return nil, false, err
		}
		if current, err = document(latest); err != nil {
			return nil, false, err
		}
	}
}

// reread waits for the next backoff step and reads the object again until
// it has another resourceVersion than rv. It returns conflict once the
// backoff is spent.
func (h *Helper) reread(ctx context.Context, obj client.Object, rv string, backoff *wait.Backoff, conflict error) (client.Object, error) {
	for backoff.Steps > 0 {
		t := time.NewTimer(backoff.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(conflict, ctx.Err())
		case <-t.C:
		}
		fresh := obj.DeepCopyObject().(client.Object)
		if err := h.client.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			return nil, fmt.Errorf("read after a conflict: %w", err)
		}
		if fresh.GetResourceVersion() != rv {
			return fresh, nil
		}
	}
	return nil, conflict
}

// documents returns the baseline and obj as JSON documents.
func (h *Helper) documents(obj client.Object) (before, after map[string]any, err error) {
	if reflect.TypeOf(obj) != reflect.TypeOf(h.base) {
		return nil, nil, fmt.Errorf("patch %s: the object is a %T, the baseline a %T", h.describe(obj), obj, h.base)
	}
	if before, err = document(h.base); err != nil {
		return nil, nil, err
	}
	after, err = document(obj)
	return before, after, err
}

// conflict turns an overlap of two writers' changes into a Conflict error.
func (h *Helper) conflict(obj client.Object, overlap error) error {
	gr := schema.GroupResource{Resource: reflect.TypeOf(obj).Elem().Name()}
	if gvk, err := h.client.GroupVersionKindFor(obj); err == nil {
		gr = schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
		if m, err := h.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			gr = m.Resource.GroupResource()
		}
	}
	return apierrors.NewConflict(gr, obj.GetName(), overlap)
}

// describe names obj in error messages: its kind and namespace/name.
func (h *Helper) describe(obj client.Object) string {
	kind := reflect.TypeOf(obj).Elem().Name()
	if gvk, err := h.client.GroupVersionKindFor(obj); err == nil {
		kind = gvk.Kind
	}
	return kind + " " + klog.KObj(obj).String()
}

// part is a part of an object that is patched on its own.
type part struct {
	// name names the part in error messages.
	name string
	// of returns the part of a document.
	of func(doc map[string]any) map[string]any
	// list is the path of the list merged by key on a conflict, and key
	// returns the key of one of its items.
	list []string
	key  func(item any) (string, bool)
	// send sends a patch of the part.
	send func(ctx context.Context, c client.Client, obj client.Object, p client.Patch) error
}

// statusPart names the status part.
const statusPart = "status"

// parts are metadata and spec (every field but status), then status.
var parts = []part{{
	name: "metadata and spec",
	of: func(doc map[string]any) map[string]any {
		out := make(map[string]any, len(doc))
		for k, v := range doc {
			if k != "status" {
				out[k] = v
			}
		}
		return out
	},
	list: []string{"metadata", "finalizers"},
	key: func(item any) (string, bool) {
		s, ok := item.(string)
		return s, ok
	},
	send: func(ctx context.Context, c client.Client, obj client.Object, p client.Patch) error {
		return c.Patch(ctx, obj, p)
	},
}, {
	name: statusPart,
	of: func(doc map[string]any) map[string]any {
		if s, ok := doc["status"]; ok {
			return map[string]any{"status": s}
		}
		return map[string]any{}
	},
	list: []string{"status", "conditions"},
	key: func(item any) (string, bool) {
		m, ok := item.(map[string]any)
		if !ok {
			return "", false
		}
		t, ok := m["type"].(string)
		return t, ok
	},
	send: func(ctx context.Context, c client.Client, obj client.Object, p client.Patch) error {
		return c.Status().Patch(ctx, obj, p)
	},
}}

// document returns obj as a JSON document.
func document(obj client.Object) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %T %s: %w", obj, obj.GetName(), err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode %T %s: %w", obj, obj.GetName(), err)
	}
	return doc, nil
}

// resourceVersion returns metadata.resourceVersion of doc.
func resourceVersion(doc map[string]any) string {
	md, _ := doc["metadata"].(map[string]any)
	rv, _ := md["resourceVersion"].(string)
	return rv
}
