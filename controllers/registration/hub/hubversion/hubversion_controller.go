package hubversion

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

// Reconciler reports the running hub controller's version
// (HubControllerVersion) on the ClusterManager. The other conditions are
// the ClusterManager operator's, computed from the hub controller
// Deployment; this reconciler writes none of them.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Name is the ClusterManager to report on (--cluster-manager-name).
	Name string
}

// +kubebuilder:rbac:groups=operator.open-cluster-management.io,resources=clustermanagers,verbs=list;watch
// +kubebuilder:rbac:groups=operator.open-cluster-management.io,resources=clustermanagers/status,verbs=patch

// SetupWithManager registers the reconciler for the one ClusterManager Name.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	named := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == r.Name })
	// The controller is named after the kind it reconciles, in logs and
	// metrics.
	return ctrl.NewControllerManagedBy(mgr).
		Named("clustermanager").
		For(&operatorv1.ClusterManager{}, builder.WithPredicates(named)).
		Complete(r)
}

// Reconcile records the build version of this hub controller, the elected
// leader. The patch helper writes only when something changed, so an
// upgraded controller writes its new version once, and it keeps the
// conditions the operator wrote meanwhile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &operatorv1.ClusterManager{}
	if err := r.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cm, r.Client)
	meta.SetStatusCondition(&cm.Status.Conditions, version.HubControllerCondition(version.Version, cm.Generation))
	return ctrl.Result{}, h.Patch(ctx, cm)
}
