package clustermanager

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubclean"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// clusterPoll is how often a deleted ClusterManager looks again at the
// ManagedClusters its removal waits for.
const clusterPoll = 5 * time.Second

// crdPoll is how often a deleted ClusterManager looks again at the CRDs the
// API server is removing.
const crdPoll = time.Second

// cleanup removes the hub of a deleted ClusterManager by the rule of
// pkg/hubclean, then lets the ClusterManager go. While ManagedClusters
// remain it refuses (Applied False, ManagedClustersExist) unless the
// ClusterManager carries ForceCleanAnnotation, in which case it deletes
// them and waits until the hub controller, still running, has cleaned up
// after each. It lets the ClusterManager go once the API server has removed
// the CRDs too, so that a new ClusterManager finds none terminating. The operator's own install (HubOperatorObjects) stays: `hub
// clean` or whoever installed the operator removes it.
func (r *Reconciler) cleanup(ctx context.Context, cm *operatorv1.ClusterManager) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cm, operatorv1.CleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	h := patch.NewHelper(cm, r.Client)
	clusters, err := hubclean.Clusters(ctx, r.Writer)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(clusters) > 0 {
		if cm.Annotations[operatorv1.ForceCleanAnnotation] != "true" {
			setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonManagedClustersExist,
				hubclean.RefusalMessage(clusters, fmt.Sprintf("annotate ClusterManager %s with %s=true", cm.Name, operatorv1.ForceCleanAnnotation)))
			return ctrl.Result{RequeueAfter: clusterPoll}, h.Patch(ctx, cm)
		}
		if err := hubclean.DeleteClusters(ctx, r.Writer, clusters, func(name string) {
			ctrl.LoggerFrom(ctx).Info("Deleted ManagedCluster", "cluster", name)
		}); err != nil {
			return ctrl.Result{}, err
		}
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonDeletingManagedClusters,
			fmt.Sprintf("Waiting for the hub controller to clean up after the deleted ManagedClusters %v.", hubclean.Names(clusters)))
		return ctrl.Result{RequeueAfter: clusterPoll}, h.Patch(ctx, cm)
	}
	objs, err := r.installed(cm)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := hubclean.Remove(ctx, r.Writer, objs, func(obj client.Object) {
		ctrl.LoggerFrom(ctx).Info("Removed", "object", fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName()))
	}); err != nil {
		return ctrl.Result{}, err
	}
	left, err := hubclean.RemainingCRDs(ctx, r.Writer, objs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(left) > 0 {
		setCondition(cm, operatorv1.ConditionClusterManagerApplied, false, operatorv1.ReasonRemovingCRDs,
			fmt.Sprintf("Waiting for the API server to remove the CustomResourceDefinitions %v and their custom resources.", left))
		return ctrl.Result{RequeueAfter: crdPoll}, h.Patch(ctx, cm)
	}
	controllerutil.RemoveFinalizer(cm, operatorv1.CleanupFinalizer)
	return ctrl.Result{}, h.Patch(ctx, cm)
}

// installed returns what the operator installs for cm, less the objects of
// its own install.
func (r *Reconciler) installed(cm *operatorv1.ClusterManager) ([]*unstructured.Unstructured, error) {
	values, _, _ := config.HubValuesFromClusterManager(cm)
	values.ConversionWebhookURL = r.ConversionWebhookURL
	objs, err := config.HubObjects(values)
	if err != nil {
		return nil, fmt.Errorf("render the hub: %w", err)
	}
	own, err := config.HubOperatorObjects(config.HubOperatorValues{ClusterManagerName: cm.Name})
	if err != nil {
		return nil, fmt.Errorf("render the operator: %w", err)
	}
	return hubclean.Without(objs, own), nil
}
