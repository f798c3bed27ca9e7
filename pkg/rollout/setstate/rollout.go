package setstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// Rollout is the rollout of a ManifestWorkReplicaSet's current revision,
// computed as the hub controller computes it (pkg/rollout) from what the
// caller may read.
type Rollout struct {
	*History
	// Policy is the set's rollout policy (its annotations); PolicyErr says
	// why they do not make one, which holds the rollout.
	Policy    rolloutv1alpha1.Policy
	PolicyErr error
	// Number and Hash identify the current revision; Revision is its
	// ControllerRevision.
	Number   int64
	Hash     string
	Revision *appsv1.ControllerRevision
	// Approvals are the set's RolloutApprovals.
	Approvals []rolloutv1alpha1.RolloutApproval
	// Placements are the set's placementRefs, in order.
	Placements []Placement
	// WorksHidden says that the caller may not list the set's ManifestWorks:
	// the rollout was computed as if no cluster had started.
	WorksHidden bool
}

// Placement is the rollout of one placementRef.
type Placement struct {
	// Name is the Placement's.
	Name string
	// Result is the rollout pkg/rollout computed; Err says why it could not.
	Result rollout.Result
	Err    error
}

// ErrRevisionPending means that the hub has not recorded the revision of a
// set's current template yet.
var ErrRevisionPending = errors.New("the hub controller has not recorded the revision of its current template yet (it does as it reconciles the set: kubectl ocm hub status)")

// Read reads ManifestWorkReplicaSet namespace/name, its revisions,
// approvals, placement decisions and its ManifestWorks, and computes the
// rollout of its current revision at now. Unless needWorks, a caller who may
// not list the ManifestWorks gets the rollout with every cluster not started
// (enough to know the stages) and WorksHidden set, instead of an error. The
// error wraps ErrRevisionPending while the hub has not recorded the
// revision of the set's current template.
func Read(ctx context.Context, c client.Client, namespace, name string, needWorks bool, now time.Time) (*Rollout, error) {
	h, err := ReadHistory(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	r := &Rollout{History: h}
	r.Policy, r.PolicyErr = rolloutv1alpha1.PolicyOf(h.Set.Annotations)
	if n, err := strconv.ParseInt(h.Set.Annotations[revision.Annotation], 10, 64); err == nil {
		r.Number = n
		r.Revision = h.Find(n)
	}
	_, want, err := revision.Of(h.Set).Encode()
	if err != nil {
		return nil, err
	}
	if r.Revision == nil || r.Revision.Labels[revision.HashLabel] != want {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: %w", namespace, name, ErrRevisionPending)
	}
	r.Hash = want
	approvals := &rolloutv1alpha1.RolloutApprovalList{}
	if err := c.List(ctx, approvals, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list the RolloutApprovals of namespace %s: %w", namespace, err)
	}
	for _, a := range approvals.Items {
		if a.Spec.ManifestWorkReplicaSet == name {
			r.Approvals = append(r.Approvals, a)
		}
	}
	byCluster := map[string]*workv1.ManifestWork{}
	list := &workv1.ManifestWorkList{}
	switch err := c.List(ctx, list, client.MatchingLabels(workv1alpha1.OwnerLabels(namespace, name))); {
	case apierrors.IsForbidden(err) && !needWorks:
		r.WorksHidden = true
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("the rollout's state needs the ManifestWorks of %s/%s, which you may not list in every namespace: %w", namespace, name, err)
	case err != nil:
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	for i := range list.Items {
		if workv1alpha1.Owns(namespace, name, &list.Items[i]) {
			byCluster[list.Items[i].Namespace] = &list.Items[i]
		}
	}
	seen := map[string]bool{}
	for _, ref := range h.Set.Spec.PlacementRefs {
		pds := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, pds, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name}); err != nil {
			return nil, fmt.Errorf("list the decisions of placement %s/%s: %w", namespace, ref.Name, err)
		}
		groups, owned := rollout.Claim(rollout.DecisionGroups(pds.Items), seen)
		states := map[string]rollout.ClusterState{}
		for _, cl := range owned {
			mw := byCluster[cl]
			states[cl] = rollout.WorkState(mw, mw != nil && mw.Annotations[revision.HashAnnotation] == r.Hash, r.Policy.HealthCondition)
		}
		in := rollout.Input{Strategy: ref.RolloutStrategy, Groups: groups, States: states, Now: now, Hold: r.PolicyErr != nil}
		p := Placement{Name: ref.Name}
		p.Result, p.Err = rollout.Compute(rollout.Controlled(in, r.Policy, name, ref.Name, r.Number, r.Hash, r.Approvals))
		r.Placements = append(r.Placements, p)
	}
	return r, nil
}

// Approval returns the approval of a gate of the current revision, nil
// when it is not approved.
func (r *Rollout) Approval(placement, stage string, gate rollout.GateType) *rolloutv1alpha1.RolloutApproval {
	for i := range r.Approvals {
		s := r.Approvals[i].Spec
		if s.Revision == r.Number && s.Placement == placement && s.Stage == stage && s.Gate == gate {
			return &r.Approvals[i]
		}
	}
	return nil
}

// NextGate is the gate of stage that an approval without a named gate
// opens: the one the rollout waits at, else the stage's first gate not
// approved yet (Before, then After), else its last.
func (r *Rollout) NextGate(p Placement, stage string) rollout.GateType {
	if w := p.Result.Waiting; w != nil && w.Stage == stage {
		return w.Type
	}
	if r.Policy.Before && r.Approval(p.Name, stage, rollout.GateBefore) == nil {
		return rollout.GateBefore
	}
	if r.Policy.After {
		return rollout.GateAfter
	}
	return rollout.GateBefore
}

// Aborted reports whether the current revision's rollout was aborted.
func (r *Rollout) Aborted() bool {
	return r.Policy.Aborted != 0 && r.Policy.Aborted == r.Number
}

// State is the rollout's state in a word, and what it waits for: the
// reason of PlacementRolledOut, as the hub controller writes it, recomputed.
func (r *Rollout) State() (string, string) {
	var waiting, invalid []string
	complete := true
	for _, p := range r.Placements {
		switch {
		case p.Err != nil:
			invalid = append(invalid, fmt.Sprintf("placement %s: %v", p.Name, p.Err))
		case !p.Result.Complete:
			complete = false
			if w := p.Result.Waiting; w != nil {
				waiting = append(waiting, fmt.Sprintf("placement %s waits for approval %s", p.Name, w))
			}
		}
	}
	switch {
	case r.PolicyErr != nil:
		return workv1alpha1.ReasonInvalidRolloutStrategy, r.PolicyErr.Error()
	case len(invalid) > 0:
		return workv1alpha1.ReasonInvalidRolloutStrategy, strings.Join(invalid, "; ")
	case complete:
		return workv1alpha1.ReasonComplete, "every cluster runs revision " + strconv.FormatInt(r.Number, 10)
	case r.Aborted():
		return rolloutv1alpha1.ReasonAborted, "no further cluster is started"
	case r.Policy.Paused:
		return rolloutv1alpha1.ReasonPaused, "no further cluster is started until it is resumed"
	case len(waiting) > 0:
		return rolloutv1alpha1.ReasonAwaitingApproval, strings.Join(waiting, "; ")
	}
	return workv1alpha1.ReasonProgressing, ""
}
