package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// serveWorks starts a's work agent: an informer on the ManifestWorks of its
// cluster namespace, with the agent's own certificate identity, that
// acknowledges every work as if each manifest had been applied and were
// available (see AckWorkStatus). It returns once the informer has synced;
// the informer runs in loops until ctx ends.
func (a *SimAgent) serveWorks(ctx context.Context, h *SimHub, loops *sync.WaitGroup) error {
	ack := func(obj any) {
		w, ok := obj.(*workv1.ManifestWork)
		if !ok {
			return
		}
		switch wrote, err := AckWork(ctx, a.hub, w.DeepCopy()); {
		case err == nil && wrote:
			h.works.Add(1)
		case err != nil && ctx.Err() == nil:
			h.workFailures.Add(1)
		}
	}
	lw := ListWatch(a.hub, &workv1.ManifestWorkList{}, client.InNamespace(a.cluster))
	synced := RunInformer(ctx, loops, lw, &workv1.ManifestWork{}, ack)
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return fmt.Errorf("the ManifestWork informer of %s did not sync: %w", a.cluster, ctx.Err())
	}
	return nil
}

// AckWork writes w's acknowledged status (see AckWorkStatus) through c
// unless it already has it, and reports whether it wrote it. A conflict
// means a newer version is on its way to the informer, which acknowledges
// that one; other errors are retried briefly.
func AckWork(ctx context.Context, c client.Client, w *workv1.ManifestWork) (bool, error) {
	if !w.DeletionTimestamp.IsZero() {
		return false, nil
	}
	status, err := AckWorkStatus(w)
	if err != nil {
		return false, err
	}
	if equalStatus(w.Status, status) {
		return false, nil
	}
	w.Status = status
	wrote := false
	err = retry.OnError(retry.DefaultBackoff, func(err error) bool { return ctx.Err() == nil }, func() error {
		err := c.Status().Update(ctx, w)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		wrote = err == nil
		return err
	})
	return wrote, err
}

// equalStatus compares two work statuses ignoring condition times.
func equalStatus(a, b workv1.ManifestWorkStatus) bool {
	strip := func(s workv1.ManifestWorkStatus) string {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		for i := range s.ResourceStatus.Manifests {
			for j := range s.ResourceStatus.Manifests[i].Conditions {
				s.ResourceStatus.Manifests[i].Conditions[j].LastTransitionTime = metav1.Time{}
			}
		}
		data, _ := json.Marshal(s)
		return string(data)
	}
	return strip(a) == strip(b)
}

// AckWorkStatus returns the status a work agent would report for w once
// every manifest is applied and available: Applied and Available True at
// w's generation, each manifest's resource meta with Applied and Available
// True, and, for every Deployment whose manifest config asks for the
// well-known status, the feedback of a Deployment whose replicas are all
// ready (ReadyReplicas, Replicas and AvailableReplicas equal to
// spec.replicas, 1 when unset). It keeps the conditions' transition times of
// w's current status.
func AckWorkStatus(w *workv1.ManifestWork) (workv1.ManifestWorkStatus, error) {
	out := workv1.ManifestWorkStatus{Conditions: append([]metav1.Condition(nil), w.Status.Conditions...)}
	for i, m := range w.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			return out, fmt.Errorf("manifest %d of ManifestWork %s/%s: %w", i, w.Namespace, w.Name, err)
		}
		gv := obj.GroupVersionKind().GroupVersion()
		plural, _ := meta.UnsafeGuessKindToResource(obj.GroupVersionKind())
		rm := workv1.ManifestResourceMeta{Ordinal: int32(i), Group: gv.Group, Version: gv.Version, Kind: obj.GetKind(),
			Resource: plural.Resource, Name: obj.GetName(), Namespace: obj.GetNamespace()}
		mc := workv1.ManifestCondition{ResourceMeta: rm}
		if prev := findManifest(w.Status.ResourceStatus.Manifests, rm); prev != nil {
			mc.Conditions = append(mc.Conditions, prev.Conditions...)
		}
		meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue,
			Reason: workv1.ManifestAppliedReasonComplete, Message: "Apply manifest complete"})
		meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue,
			Reason: workv1.ManifestAvailableReasonAvailable, Message: "Resource is available"})
		if rm.Kind == "Deployment" && rm.Group == "apps" && wantsWellKnownStatus(w.Spec.FindManifestConfig(rm)) {
			replicas, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			if err != nil {
				return out, fmt.Errorf("manifest %d of ManifestWork %s/%s: %w", i, w.Namespace, w.Name, err)
			}
			if !found {
				replicas = 1
			}
			for _, name := range []string{"ReadyReplicas", "Replicas", "AvailableReplicas"} {
				mc.StatusFeedbacks.Values = append(mc.StatusFeedbacks.Values, workv1.FeedbackValue{Name: name,
					Value: workv1.FieldValue{Type: workv1.Integer, Integer: &replicas}})
			}
			meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue,
				Reason: workv1.StatusFeedbackSyncedReasonSynced, Message: "Status feedback is synced"})
		}
		out.ResourceStatus.Manifests = append(out.ResourceStatus.Manifests, mc)
	}
	meta.SetStatusCondition(&out.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: workv1.WorkAppliedReasonComplete, Message: "Apply manifest work complete", ObservedGeneration: w.Generation})
	meta.SetStatusCondition(&out.Conditions, metav1.Condition{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue,
		Reason: workv1.WorkAvailableReasonAvailable, Message: "All resources are available", ObservedGeneration: w.Generation})
	return out, nil
}

// findManifest returns the manifest status of rm's object in ms, or nil.
func findManifest(ms []workv1.ManifestCondition, rm workv1.ManifestResourceMeta) *workv1.ManifestCondition {
	for i := range ms {
		m := ms[i].ResourceMeta
		if m.Group == rm.Group && m.Kind == rm.Kind && m.Namespace == rm.Namespace && m.Name == rm.Name {
			return &ms[i]
		}
	}
	return nil
}

// wantsWellKnownStatus reports whether c asks for the well-known status.
func wantsWellKnownStatus(c *workv1.ManifestConfigOption) bool {
	if c == nil {
		return false
	}
	for _, r := range c.FeedbackRules {
		if strings.EqualFold(string(r.Type), string(workv1.WellKnownStatusType)) {
			return true
		}
	}
	return false
}
