package sigdecision

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "sigplacementdecision"

// ReasonNameTaken is the reason of the Warning event recorded on a
// PlacementDecision whose mirror's name another scheduler's
// PlacementDecision holds.
const ReasonNameTaken = "SIGPlacementDecisionNameTaken"

// Reconciler keeps the mirror of every PlacementDecision equal to Mirror of
// it. A request names a PlacementDecision and its mirror, which share
// namespace and name. A mirror whose source is gone is left to the garbage
// collector, which deletes it through its owner reference.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder, when set, records a Warning event on a PlacementDecision
	// whose mirror cannot be written because another scheduler's
	// PlacementDecision has its name.
	Recorder events.EventRecorder
}

// The mirror carries a blocking owner reference to its source, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on placementdecisions/finalizers.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions/finalizers,verbs=update
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=placementdecisions,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler: a PlacementDecision
// reconciles its mirror, and a change or deletion of a multicluster.x-k8s.io
// PlacementDecision reconciles it again (its source shares its name).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1beta1.PlacementDecision{}).
		Watches(&multiclusterv1alpha1.PlacementDecision{}, &handler.EnqueueRequestForObject{}).
		Complete(r)
}

// Reconcile creates or updates the mirror of PlacementDecision req.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	src := &clusterv1beta1.PlacementDecision{}
	if err := r.Client.Get(ctx, req.NamespacedName, src); err != nil {
		// A source gone takes its mirror with it (garbage collection).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !src.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	want := Mirror(src)
	log := ctrl.LoggerFrom(ctx).WithValues("placementDecision", klog.KObj(src))
	cur := &multiclusterv1alpha1.PlacementDecision{}
	err := r.Client.Get(ctx, req.NamespacedName, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			// AlreadyExists: the cache has not seen a mirror created since.
			return patch.RetryStale(ctx, fmt.Errorf("create multicluster.x-k8s.io PlacementDecision %s: %w", klog.KObj(want), err), apierrors.IsAlreadyExists)
		}
		log.V(2).Info("Created the multicluster.x-k8s.io PlacementDecision", "decisions", len(want.Decisions))
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get multicluster.x-k8s.io PlacementDecision %s: %w", req.NamespacedName, err)
	case !IsManaged(cur):
		log.Info("Not mirroring: a multicluster.x-k8s.io PlacementDecision of another scheduler has its name",
			"scheduler", cur.SchedulerName, "clusterManager", cur.Labels[multiclusterv1alpha1.LabelClusterManagerKey])
		if r.Recorder != nil {
			r.Recorder.Eventf(src, nil, corev1.EventTypeWarning, ReasonNameTaken, "Mirror",
				"multicluster.x-k8s.io PlacementDecision %s belongs to another scheduler (%s=%q); rename or delete it to have this decision mirrored",
				req.NamespacedName, multiclusterv1alpha1.LabelClusterManagerKey, cur.Labels[multiclusterv1alpha1.LabelClusterManagerKey])
		}
		return ctrl.Result{}, nil
	case !cur.DeletionTimestamp.IsZero():
		// Its deletion reconciles again and creates it anew.
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cur, r.Client)
	Update(cur, want)
	if changed, err := h.HasChanges(cur); err != nil || !changed {
		return ctrl.Result{}, err
	}
	if err := h.Patch(ctx, cur); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	log.V(2).Info("Updated the multicluster.x-k8s.io PlacementDecision", "decisions", len(want.Decisions))
	return ctrl.Result{}, nil
}
