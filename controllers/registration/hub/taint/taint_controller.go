package taint

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// eventTaintsUpdated is recorded when the hub-managed taints change.
const eventTaintsUpdated = "ManagedClusterConditionAvailableUpdated"

// Reconciler sets the hub-managed taints of ManagedClusters.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Recorder records events on ManagedClusters.
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("taint").For(&clusterv1.ManagedCluster{}).Complete(r)
}

// Reconcile patches spec.taints when they disagree with the cluster's
// availability.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cluster, r.Client)
	cluster.Spec.Taints = Desired(cluster.Spec.Taints, cluster.AvailableStatus(), metav1.Now())
	changed, err := h.HasChanges(cluster)
	if err != nil || !changed {
		return ctrl.Result{}, err
	}
	if err := h.Patch(ctx, cluster); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	if !h.SentSpec() {
		// The cache had not shown this controller's own write yet: the
		// change is made and was recorded then.
		return ctrl.Result{}, nil
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updated hub-managed taints", "available", cluster.AvailableStatus())
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, eventTaintsUpdated, "Taint",
		"hub-managed taints of managed cluster %s updated: available is %s", cluster.Name, cluster.AvailableStatus())
	return ctrl.Result{}, nil
}
