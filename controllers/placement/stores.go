package placement

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
)

// stores are the informer stores of the objects every scheduling run reads
// in full: all ManagedClusters and all AddOnPlacementScores. Reading the
// stores hands out the cached objects themselves, where a cache List copies
// each of them into a new list: at a thousand clusters and a thousand
// placements that is a gigabyte of garbage per scheduling pass. The
// scheduler never mutates what it reads. A store is updated before any
// event about it is delivered, so a run started by an event sees its object.
type stores struct {
	clusters toolscache.Store
	scores   toolscache.Store
}

// storeOf returns the store of the informer of obj in c.
func storeOf(ctx context.Context, c cache.Cache, obj client.Object) (toolscache.Store, error) {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("get the informer of %T: %w", obj, err)
	}
	s, ok := informer.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("the informer of %T has no store", obj)
	}
	return s.GetStore(), nil
}

// newStores returns the stores of c's ManagedCluster and AddOnPlacementScore informers.
func newStores(ctx context.Context, c cache.Cache) (*stores, error) {
	clusters, err := storeOf(ctx, c, &clusterv1.ManagedCluster{})
	if err != nil {
		return nil, err
	}
	scores, err := storeOf(ctx, c, &clusterv1alpha1.AddOnPlacementScore{})
	if err != nil {
		return nil, err
	}
	return &stores{clusters: clusters, scores: scores}, nil
}

// listClusters returns every cached ManagedCluster (shared, read-only).
func (s *stores) listClusters() []*clusterv1.ManagedCluster {
	items := s.clusters.List()
	out := make([]*clusterv1.ManagedCluster, 0, len(items))
	for _, o := range items {
		if c, ok := o.(*clusterv1.ManagedCluster); ok {
			out = append(out, c)
		}
	}
	return out
}

// listScores returns every cached AddOnPlacementScore (shared, read-only).
func (s *stores) listScores() []*clusterv1alpha1.AddOnPlacementScore {
	items := s.scores.List()
	out := make([]*clusterv1alpha1.AddOnPlacementScore, 0, len(items))
	for _, o := range items {
		if sc, ok := o.(*clusterv1alpha1.AddOnPlacementScore); ok {
			out = append(out, sc)
		}
	}
	return out
}
