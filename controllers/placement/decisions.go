package placement

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
)

// desiredDecision is one PlacementDecision the scheduler wants to exist.
type desiredDecision struct {
	// name is <placement>-decision-<n>.
	name string
	// groupIndex and groupName are the decision group's index and name.
	groupIndex int32
	groupName  string
	// decisions are the PlacementDecision's status.decisions.
	decisions []clusterv1beta1.ClusterDecision
}

// labels returns the labels of the PlacementDecision of d for placement p.
func (d desiredDecision) labels(p *clusterv1beta1.Placement) map[string]string {
	return map[string]string{
		clusterv1beta1.PlacementLabel:          p.Name,
		clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(int(d.groupIndex)),
		clusterv1beta1.DecisionGroupNameLabel:  d.groupName,
	}
}

// desiredDecisions pages the decisions of every group into PlacementDecisions
// of at most MaxDecisionsPerPlacementDecision decisions, numbered from 1 in
// group order. Every group gets at least one PlacementDecision, so a
// placement that selects nothing still has one, empty.
func desiredDecisions(p *clusterv1beta1.Placement, groups []placement.Group) []desiredDecision {
	var out []desiredDecision
	for _, g := range groups {
		decisions := g.Decisions
		for first := true; first || len(decisions) > 0; first = false {
			n := min(len(decisions), clusterv1beta1.MaxDecisionsPerPlacementDecision)
			out = append(out, desiredDecision{
				name:       clusterv1beta1.PlacementDecisionName(p.Name, len(out)+1),
				groupIndex: g.Index,
				groupName:  g.Name,
				decisions:  append([]clusterv1beta1.ClusterDecision{}, decisions[:n]...),
			})
			decisions = decisions[n:]
		}
	}
	if len(out) == 0 {
		out = append(out, desiredDecision{name: clusterv1beta1.PlacementDecisionName(p.Name, 1), decisions: []clusterv1beta1.ClusterDecision{}})
	}
	return out
}

// writeDecisions makes p's PlacementDecisions those of desired: it creates
// the missing ones, updates the ones whose labels, owner or decisions differ
// and deletes the surplus ones. Unchanged ones are not written. It returns
// how many objects it wrote.
func (r *Reconciler) writeDecisions(ctx context.Context, p *clusterv1beta1.Placement, existing []*clusterv1beta1.PlacementDecision, desired []desiredDecision) (int, error) {
	byName := make(map[string]*clusterv1beta1.PlacementDecision, len(existing))
	for _, d := range existing {
		byName[d.Name] = d
	}
	written := 0
	for _, want := range desired {
		cur, ok := byName[want.name]
		delete(byName, want.name)
		n, err := r.writeDecision(ctx, p, cur, ok, want)
		written += n
		if err != nil {
			return written, err
		}
	}
	for _, surplus := range byName {
		key := types.NamespacedName{Namespace: surplus.Namespace, Name: surplus.Name}
		r.own.expect(key, deletedMark)
		err := r.Writer.Delete(ctx, surplus, client.Preconditions{UID: &surplus.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return written, fmt.Errorf("delete PlacementDecision %s/%s: %w", surplus.Namespace, surplus.Name, err)
		}
		r.written.Forget(placementKey(p), key)
		written++
	}
	return written, nil
}

// writeDecision creates or updates one PlacementDecision; cur is the cached
// one when exists. It returns the number of writes.
func (r *Reconciler) writeDecision(ctx context.Context, p *clusterv1beta1.Placement, cur *clusterv1beta1.PlacementDecision, exists bool, want desiredDecision) (int, error) {
	key := types.NamespacedName{Namespace: p.Namespace, Name: want.name}
	owner := *metav1.NewControllerRef(p, clusterv1beta1.GroupVersion.WithKind("Placement"))
	labels := want.labels(p)
	writes := 0
	var d *clusterv1beta1.PlacementDecision
	if !exists {
		d = &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace, Name: want.name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{owner},
		}}
		r.own.expect(key, fingerprint(d))
		if err := r.Writer.Create(ctx, d); err != nil {
			return 0, fmt.Errorf("create PlacementDecision %s: %w", key, err)
		}
		r.written.Record(placementKey(p), "", d.DeepCopy())
		writes++
	} else {
		d = cur.DeepCopy()
		if !hasLabels(d.Labels, labels) || !isOnlyOwner(d.OwnerReferences, owner) {
			if d.Labels == nil {
				d.Labels = map[string]string{}
			}
			for k, v := range labels {
				d.Labels[k] = v
			}
			d.OwnerReferences = []metav1.OwnerReference{owner}
			r.own.expect(key, fingerprint(d))
			if err := r.Writer.Update(ctx, d); err != nil {
				return 0, fmt.Errorf("update PlacementDecision %s: %w", key, err)
			}
			r.written.Record(placementKey(p), cur.ResourceVersion, d.DeepCopy())
			writes++
		}
	}
	if exists && sameDecisions(d.Status.Decisions, want.decisions) {
		return writes, nil
	}
	// A created PlacementDecision gets its status written even when empty,
	// so that status.decisions is always present.
	d.Status.Decisions = want.decisions
	from := d.ResourceVersion
	r.own.expect(key, fingerprint(d))
	if err := r.Writer.Status().Update(ctx, d); err != nil {
		return writes, fmt.Errorf("update status of PlacementDecision %s: %w", key, err)
	}
	r.written.Record(placementKey(p), from, d)
	return writes + 1, nil
}

// hasLabels reports whether have holds every label of want.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// isOnlyOwner reports whether refs is exactly the controller reference want.
func isOnlyOwner(refs []metav1.OwnerReference, want metav1.OwnerReference) bool {
	return len(refs) == 1 && equality.Semantic.DeepEqual(refs[0], want)
}

// sameDecisions compares two decision lists by cluster and reason, in
// order, nil and empty alike. A score is the cluster's score when it was
// selected (ClusterDecision.Score): a score that changed alone is not
// written. Balance scores a cluster by the other placements' decisions, so
// every run of a placement that shares its clusters with others scored them
// anew, and a hub controller's restart rewrote hundreds of decisions of
// 1,000 placements for their scores alone.
func sameDecisions(a, b []clusterv1beta1.ClusterDecision) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ClusterName != b[i].ClusterName || a[i].Reason != b[i].Reason {
			return false
		}
	}
	return true
}
