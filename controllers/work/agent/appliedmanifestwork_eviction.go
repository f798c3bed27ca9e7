package agent

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

const (
	// DefaultEvictionGracePeriod is how long an AppliedManifestWork whose
	// ManifestWork is gone from the hub is kept before it and its objects
	// are deleted, as in OCM.
	DefaultEvictionGracePeriod = 60 * time.Minute
	// evictionDisabledAfter is the grace period from which eviction is off
	// (OCM: 100 years or more never evicts).
	evictionDisabledAfter = 100 * 365 * 24 * time.Hour
)

// hubView is what the AppliedManifestWork controller knows of the connected
// hub: set by a session once its ManifestWork cache has synced, cleared when
// the session ends. Without it nothing is evicted: an agent that cannot see
// the hub cannot tell which works are gone.
type hubView struct {
	// works reads the cluster's ManifestWorks from the session's cache.
	works   client.Reader
	cluster string
	hubHash string
	agentID string
}

// ours reports whether amw belongs to this agent: it records a work of the
// connected hub, or was written by this agent for another hub (the agent
// moved to a new hub and the old records are left over).
func (v *hubView) ours(amw *workv1.AppliedManifestWork) bool {
	return amw.Spec.HubHash == v.hubHash || (v.agentID != "" && amw.Spec.AgentID == v.agentID)
}

// workExists reports whether amw's ManifestWork exists on the connected hub.
// Records of another hub never have one here.
func (v *hubView) workExists(ctx context.Context, amw *workv1.AppliedManifestWork) (bool, error) {
	if amw.Spec.HubHash != v.hubHash {
		return false, nil
	}
	err := v.works.Get(ctx, types.NamespacedName{Namespace: v.cluster, Name: amw.Spec.ManifestWorkName}, &workv1.ManifestWork{})
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

// reconcileEviction evicts an AppliedManifestWork of this agent whose
// ManifestWork is missing from the hub: it records when the work was found
// missing (status.evictionStartTime) and, once the grace period has passed
// since, deletes the record, whose finalizer then deletes the objects it
// owns as for a deleted ManifestWork. A work that reappears first clears
// evictionStartTime.
func (r *appliedWorkReconciler) reconcileEviction(ctx context.Context, amw *workv1.AppliedManifestWork) (ctrl.Result, error) {
	if r.hub == nil {
		return ctrl.Result{}, nil
	}
	view := r.hub.Load()
	if view == nil || r.grace >= evictionDisabledAfter || !view.ours(amw) {
		return ctrl.Result{}, nil
	}
	exists, err := view.workExists(ctx, amw)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("look up ManifestWork %s/%s: %w", view.cluster, amw.Spec.ManifestWorkName, err)
	}
	log := ctrl.LoggerFrom(ctx)
	start := amw.Status.EvictionStartTime
	switch {
	case exists && start == nil:
		return ctrl.Result{}, nil
	case exists:
		log.Info("The ManifestWork is back on the hub; eviction canceled", "manifestWork", amw.Spec.ManifestWorkName)
		return ctrl.Result{}, r.setEvictionStart(ctx, amw, nil)
	case start == nil:
		now := metav1.NewTime(r.now())
		log.Info("The ManifestWork is gone from the hub; evicting its AppliedManifestWork after the grace period",
			"manifestWork", amw.Spec.ManifestWorkName, "hubHash", amw.Spec.HubHash, "gracePeriod", r.grace)
		if err := r.setEvictionStart(ctx, amw, &now); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: r.grace}, nil
	}
	if left := start.Add(r.grace).Sub(r.now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	uid := amw.UID
	if err := r.client.Delete(ctx, amw, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("evict AppliedManifestWork: %w", err)
	}
	log.Info("Evicted the AppliedManifestWork of a ManifestWork gone from the hub; deleting the objects it owns",
		"manifestWork", amw.Spec.ManifestWorkName, "evictionStartTime", start.Time)
	return ctrl.Result{}, nil
}

// setEvictionStart writes amw's status.evictionStartTime (nil clears it).
func (r *appliedWorkReconciler) setEvictionStart(ctx context.Context, amw *workv1.AppliedManifestWork, t *metav1.Time) error {
	amw = amw.DeepCopy()
	h := patch.NewHelper(amw, r.client)
	amw.Status.EvictionStartTime = t
	if err := h.Patch(ctx, amw); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("set evictionStartTime: %w", err)
	}
	return nil
}

// connectHub runs, in a session, once its ManifestWork cache has synced: it
// shows the hub to the AppliedManifestWork controller, sends it every
// AppliedManifestWork (so that eviction starts for works deleted while the
// agent was away, and stops for works that came back) and then the records
// of ManifestWorks as they are created or deleted. It returns a function
// that hides the hub again when the session ends.
func (a *Agent) connectHub(ctx context.Context, view *hubView, works cache.Informer) (func(), error) {
	send := func(name string) {
		select {
		case a.evictEvents <- event.GenericEvent{Object: &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name}}}:
		case <-ctx.Done():
		}
	}
	byWork := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		w, ok := obj.(client.Object)
		if !ok {
			return
		}
		// Only works with a record matter: a deleted one whose finalizer
		// was not run, or one that came back during its record's eviction.
		name := workv1.AppliedManifestWorkName(view.hubHash, w.GetName())
		amw := &workv1.AppliedManifestWork{}
		if err := a.spoke.Get(ctx, types.NamespacedName{Name: name}, amw); err == nil && amw.DeletionTimestamp.IsZero() {
			send(name)
		}
	}
	reg, err := works.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: byWork, DeleteFunc: byWork})
	if err != nil {
		return nil, fmt.Errorf("watch ManifestWorks for eviction: %w", err)
	}
	a.hub.Store(view)
	list := &workv1.AppliedManifestWorkList{}
	if err := a.spoke.List(ctx, list); err != nil {
		a.hub.CompareAndSwap(view, nil)
		_ = works.RemoveEventHandler(reg)
		return nil, fmt.Errorf("list AppliedManifestWorks: %w", err)
	}
	for i := range list.Items {
		send(list.Items[i].Name)
	}
	return func() {
		a.hub.CompareAndSwap(view, nil)
		_ = works.RemoveEventHandler(reg)
	}, nil
}
