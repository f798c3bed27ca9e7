package workset

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// ChunkGrant is what a ManifestWorkReplicaSet lets the agent of one cluster
// it places work on read of the payload chunks in the set's namespace: the
// chunks its template lists and those of the revisions it keeps, so that a
// cluster still on an earlier revision (a gated rollout, an undo) reads
// that revision's payload.
type ChunkGrant struct {
	// Namespace and Set name the ManifestWorkReplicaSet.
	Namespace, Set string
	chunks         map[string]bool
}

// Lists reports whether the set's template or a revision it keeps lists
// the ManifestChunk named chunk.
func (g *ChunkGrant) Lists(chunk string) bool { return g.chunks[chunk] }

// Len is the number of chunks the grant lists.
func (g *ChunkGrant) Len() int { return len(g.chunks) }

// GrantChunks returns what ManifestWorkReplicaSet namespace/name lets the
// agent of cluster read of the chunks in namespace, read with r from the
// objects of the set's namespace alone: the set, the PlacementDecisions of
// the Placements its placementRefs name, and the ControllerRevisions it
// controls. It returns nil, with no error, unless the set exists and one
// of its Placements exists and decides cluster now; the two cases are not
// told apart, so that a caller refusing a cluster learns nothing of a
// namespace that places nothing on it. A cluster's ManifestWork naming the
// set (workv1alpha1.OwnerOf) is not evidence: whoever may edit the
// cluster's namespace may write one.
func GrantChunks(ctx context.Context, r client.Reader, namespace, name, cluster string) (*ChunkGrant, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	placed, err := Places(ctx, r, set, cluster)
	if err != nil || !placed {
		return nil, err
	}
	g := &ChunkGrant{Namespace: namespace, Set: name, chunks: map[string]bool{}}
	for _, c := range payload.Listed(&set.Spec.ManifestWorkTemplate) {
		g.chunks[c] = true
	}
	revs := &appsv1.ControllerRevisionList{}
	if err := r.List(ctx, revs, client.InNamespace(namespace), client.MatchingLabels{revision.SetLabel: revision.SetLabelValue(name)}); err != nil {
		return nil, fmt.Errorf("list the revisions of ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	for i := range revs.Items {
		cr := &revs.Items[i]
		if !metav1.IsControlledBy(cr, set) {
			continue
		}
		content, err := revision.Decode(cr)
		if err != nil {
			// A revision that cannot be read lists nothing.
			continue
		}
		for _, c := range payload.Listed(&content.Template) {
			g.chunks[c] = true
		}
	}
	return g, nil
}

// Places reports whether set places work on cluster now: one of the
// Placements its placementRefs name exists in its namespace and a
// PlacementDecision of that Placement decides cluster, as the hub
// controller reads them when it writes the clusters' ManifestWorks.
func Places(ctx context.Context, r client.Reader, set *workv1alpha1.ManifestWorkReplicaSet, cluster string) (bool, error) {
	for _, ref := range set.Spec.PlacementRefs {
		if err := r.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{}); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("get Placement %s/%s: %w", set.Namespace, ref.Name, err)
		}
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := r.List(ctx, list, client.InNamespace(set.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name}); err != nil {
			return false, fmt.Errorf("list PlacementDecisions of %s/%s: %w", set.Namespace, ref.Name, err)
		}
		for i := range list.Items {
			if slices.ContainsFunc(list.Items[i].Status.Decisions, func(d clusterv1beta1.ClusterDecision) bool { return d.ClusterName == cluster }) {
				return true, nil
			}
		}
	}
	return false, nil
}
