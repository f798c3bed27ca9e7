package placement

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

const (
	// ControllerName names the scheduler in events and logs.
	ControllerName = "placement-controller"
	// Workers is how many placements are scheduled at once.
	Workers = 32
	// writeQPS and writeBurst are the client-side rate limit of the
	// scheduler's writes, above the manager's default of 20: scheduling a
	// thousand new placements takes three writes each, and the API server's
	// priority and fairness protects it from a burst.
	writeQPS   = 200
	writeBurst = 400
	// decisionPlacementIndex indexes PlacementDecisions by the value of their
	// placement label.
	decisionPlacementIndex = "placementdecision.placement"
)

// The scheduler reads from the cache, patches Placement status, writes
// PlacementDecisions and their status, and records events. A decision
// carries a blocking owner reference to its Placement, which the
// OwnerReferencesPermissionEnforcement admission plugin allows only with
// update on placements/finalizers.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions/status,verbs=update
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters;managedclustersets;managedclustersetbindings;addonplacementscores,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the placement scheduler with mgr.
func SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &clusterv1beta1.PlacementDecision{}, decisionPlacementIndex, func(o client.Object) []string {
		if name, ok := o.GetLabels()[clusterv1beta1.PlacementLabel]; ok {
			return []string{name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index PlacementDecisions by placement: %w", err)
	}
	writer, err := writerClient(mgr)
	if err != nil {
		return err
	}
	r := &Reconciler{
		Client: mgr.GetClient(), Writer: writer,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Scheduler: placement.NewScheduler(),
		decisions: newDecisionAggregate(), own: newOwnWrites(), index: newPlacementIndex(),
	}
	if r.stores, err = newStores(ctx, mgr.GetCache()); err != nil {
		return err
	}
	informer, err := mgr.GetCache().GetInformer(ctx, &clusterv1beta1.PlacementDecision{})
	if err != nil {
		return fmt.Errorf("get the PlacementDecision informer: %w", err)
	}
	if _, err := informer.AddEventHandler(r.decisions.handler()); err != nil {
		return fmt.Errorf("watch PlacementDecisions for the Balance counts: %w", err)
	}
	specOnly := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).
		Named("placement").
		For(&clusterv1beta1.Placement{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&clusterv1.ManagedCluster{}, r.clusterHandler(), builder.WithPredicates(clusterChanged())).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfSet), specOnly).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfBinding), specOnly).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, handler.EnqueueRequestsFromMapFunc(r.placementsOfScore)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(placementOfDecision), builder.WithPredicates(r.notOwnWrite())).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
}

// writerClient returns a client that reads from mgr's cache and writes with
// the scheduler's own rate limit.
func writerClient(mgr ctrl.Manager) (client.Client, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	if cfg.QPS >= 0 && cfg.QPS < writeQPS {
		cfg.QPS, cfg.Burst = writeQPS, writeBurst
	}
	c, err := client.New(cfg, client.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, fmt.Errorf("create the scheduler's client: %w", err)
	}
	return c, nil
}
