package workttl

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "manifestwork-ttl"

// ReasonDeleted is the reason of the event recorded when a completed
// ManifestWork is deleted.
const ReasonDeleted = "CompletedManifestWorkDeleted"

// Reconciler deletes completed ManifestWorks whose TTL has passed.
type Reconciler struct {
	// Client reads ManifestWorks from the cache and deletes them.
	Client client.Client
	// Recorder records an event for each deleted ManifestWork.
	Recorder events.EventRecorder
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the ManifestWork TTL controller with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("ocm-hub-controller")}
	return r.SetupWithManager(mgr)
}

// SetupWithManager registers r with mgr. It watches the ManifestWorks that
// set a TTL.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1.ManifestWork{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			mw, ok := o.(*workv1.ManifestWork)
			return ok && ttl(mw) != nil
		}))).
		Complete(r)
}

// Reconcile deletes the ManifestWork when it has been Complete for its TTL,
// and otherwise requeues it for the moment the TTL ends.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mw := &workv1.ManifestWork{}
	if err := r.Client.Get(ctx, req.NamespacedName, mw); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	wait, due := Due(mw, now)
	if !due {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	uid := mw.UID
	err := r.Client.Delete(ctx, mw, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return ctrl.Result{}, nil // gone already, or replaced by a new work of that name
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("delete completed ManifestWork %s: %w", req.NamespacedName, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted completed ManifestWork", "manifestWork", klog.KObj(mw), "ttlSeconds", *ttl(mw))
	r.Recorder.Eventf(mw, nil, corev1.EventTypeNormal, ReasonDeleted, "Delete",
		"ManifestWork deleted %ds after it completed (spec.deleteOption.ttlSecondsAfterFinished)", *ttl(mw))
	return ctrl.Result{}, nil
}

// Due says whether mw is to be deleted at now. When it is not, wait is how
// long until it is (0: nothing will make it due but a change of mw).
// A ManifestWork is due when it sets a TTL, is not being deleted, is not
// managed by a ManifestWorkReplicaSet, and its Complete condition has been
// True for at least the TTL.
func Due(mw *workv1.ManifestWork, now time.Time) (wait time.Duration, due bool) {
	seconds := ttl(mw)
	if seconds == nil || !mw.DeletionTimestamp.IsZero() {
		return 0, false
	}
	if workv1alpha1.HasOwnerLabel(mw) {
		return 0, false
	}
	done := meta.FindStatusCondition(mw.Status.Conditions, workv1.WorkComplete)
	if done == nil || done.Status != metav1.ConditionTrue {
		return 0, false
	}
	left := done.LastTransitionTime.Add(time.Duration(*seconds) * time.Second).Sub(now)
	if left > 0 {
		return left, false
	}
	return 0, true
}

// ttl returns spec.deleteOption.ttlSecondsAfterFinished, or nil.
func ttl(mw *workv1.ManifestWork) *int64 {
	if mw.Spec.DeleteOption == nil {
		return nil
	}
	return mw.Spec.DeleteOption.TTLSecondsAfterFinished
}
