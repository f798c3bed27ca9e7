package clusterset

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// LabelReconciler puts every ManagedCluster that has no cluster set label
// into the default set.
type LabelReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// Labeling a cluster with the default set passes the cluster set admission
// policy only with create on managedclustersets/join for that set.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/join,resourceNames=default,verbs=create

// SetupWithManager registers the reconciler.
func (r *LabelReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("clusterset-label").For(&clusterv1.ManagedCluster{}).Complete(r)
}

// Reconcile labels the cluster with the default set when it has no set label.
func (r *LabelReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, ok := cluster.Labels[clusterv1beta2.ClusterSetLabel]; ok || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cluster, r.Client)
	if cluster.Labels == nil {
		cluster.Labels = map[string]string{}
	}
	cluster.Labels[clusterv1beta2.ClusterSetLabel] = clusterv1beta2.DefaultClusterSetName
	return patch.RetryStale(ctx, h.Patch(ctx, cluster), apierrors.IsNotFound)
}
