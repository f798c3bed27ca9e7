package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// fleetRollout is the rollout of a ManifestWorkReplicaSet's current
// revision, computed as the hub controller computes it (pkg/rollout) from
// what the caller may read.
type fleetRollout struct {
	*history
	policy    rolloutv1alpha1.Policy
	policyErr error
	// number and hash identify the current revision; cur is its
	// ControllerRevision.
	number int64
	hash   string
	cur    *appsv1.ControllerRevision
	// approvals are the set's RolloutApprovals.
	approvals []rolloutv1alpha1.RolloutApproval
	// placements are the set's placementRefs, in order.
	placements []placementRollout
	// worksHidden says that the caller may not list the set's ManifestWorks:
	// the rollout was computed as if no cluster had started.
	worksHidden bool
}

// placementRollout is the rollout of one placementRef.
type placementRollout struct {
	name   string
	result rollout.Result
	err    error
}

// errRevisionPending means that the hub has not recorded the revision of a
// set's current template yet.
var errRevisionPending = errors.New("the hub controller has not recorded the revision of its current template yet (it does as it reconciles the set: kubectl ocm hub status)")

// revisionWait bounds how long the rollout verbs wait for the hub to record
// the revision of a set's current template.
const revisionWait = 30 * time.Second

// readCurrentRollout is readRollout, waiting up to revisionWait (with
// progress on out) while the hub has not recorded the revision of the set's
// current template, as right after a change or an undo.
func readCurrentRollout(ctx context.Context, out io.Writer, c client.Client, namespace, name string, needWorks bool) (*fleetRollout, error) {
	var fr *fleetRollout
	err := cli.Wait(ctx, out, revisionWait, fmt.Sprintf("the revision of ManifestWorkReplicaSet %s/%s", namespace, name), func(ctx context.Context) (bool, string, error) {
		var err error
		fr, err = readRollout(ctx, c, namespace, name, needWorks)
		if errors.Is(err, errRevisionPending) {
			return false, "the hub has not recorded the current template's revision yet", nil
		}
		if err != nil {
			return false, "", cli.Stop(err)
		}
		return true, "", nil
	})
	return fr, err
}

// readRollout reads ManifestWorkReplicaSet namespace/name, its revisions,
// approvals, placement decisions and its ManifestWorks, and computes the
// rollout of its current revision. Unless needWorks, a caller who may not list
// the ManifestWorks gets the rollout with every cluster not started (enough
// to know the stages) and worksHidden set, instead of an error.
func readRollout(ctx context.Context, c client.Client, namespace, name string, needWorks bool) (*fleetRollout, error) {
	h, err := readHistory(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	fr := &fleetRollout{history: h}
	fr.policy, fr.policyErr = rolloutv1alpha1.PolicyOf(h.set.Annotations)
	if n, err := strconv.ParseInt(h.set.Annotations[revision.Annotation], 10, 64); err == nil {
		fr.number = n
		fr.cur = h.find(n)
	}
	_, want, err := revision.Of(h.set).Encode()
	if err != nil {
		return nil, err
	}
	if fr.cur == nil || fr.cur.Labels[revision.HashLabel] != want {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: %w", namespace, name, errRevisionPending)
	}
	fr.hash = want
	approvals := &rolloutv1alpha1.RolloutApprovalList{}
	if err := c.List(ctx, approvals, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list the RolloutApprovals of namespace %s: %w", namespace, err)
	}
	for _, a := range approvals.Items {
		if a.Spec.ManifestWorkReplicaSet == name {
			fr.approvals = append(fr.approvals, a)
		}
	}
	byCluster := map[string]*workv1.ManifestWork{}
	list := &workv1.ManifestWorkList{}
	switch err := c.List(ctx, list, client.MatchingLabels(workv1alpha1.OwnerLabels(namespace, name))); {
	case apierrors.IsForbidden(err) && !needWorks:
		fr.worksHidden = true
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
	now := time.Now()
	for _, ref := range h.set.Spec.PlacementRefs {
		pds := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, pds, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name}); err != nil {
			return nil, fmt.Errorf("list the decisions of placement %s/%s: %w", namespace, ref.Name, err)
		}
		groups, owned := rollout.Claim(rollout.DecisionGroups(pds.Items), seen)
		states := map[string]rollout.ClusterState{}
		for _, cl := range owned {
			mw := byCluster[cl]
			states[cl] = rollout.WorkState(mw, mw != nil && mw.Annotations[revision.HashAnnotation] == fr.hash, fr.policy.HealthCondition)
		}
		in := rollout.Input{Strategy: ref.RolloutStrategy, Groups: groups, States: states, Now: now, Hold: fr.policyErr != nil}
		pr := placementRollout{name: ref.Name}
		pr.result, pr.err = rollout.Compute(rollout.Controlled(in, fr.policy, name, ref.Name, fr.number, fr.hash, fr.approvals))
		fr.placements = append(fr.placements, pr)
	}
	return fr, nil
}

// approval returns the approval of a gate of the current revision, nil
// when it is not approved.
func (fr *fleetRollout) approval(placement, stage string, gate rollout.GateType) *rolloutv1alpha1.RolloutApproval {
	for i := range fr.approvals {
		s := fr.approvals[i].Spec
		if s.Revision == fr.number && s.Placement == placement && s.Stage == stage && s.Gate == gate {
			return &fr.approvals[i]
		}
	}
	return nil
}

// nextGate is the gate of stage that approve opens without --gate: the one
// the rollout waits at, else the stage's first gate not approved yet
// (Before, then After), else its last.
func (fr *fleetRollout) nextGate(p placementRollout, stage string) rollout.GateType {
	if w := p.result.Waiting; w != nil && w.Stage == stage {
		return w.Type
	}
	if fr.policy.Before && fr.approval(p.name, stage, rollout.GateBefore) == nil {
		return rollout.GateBefore
	}
	if fr.policy.After {
		return rollout.GateAfter
	}
	return rollout.GateBefore
}

// aborted reports whether the current revision's rollout was aborted.
func (fr *fleetRollout) aborted() bool {
	return fr.policy.Aborted != 0 && fr.policy.Aborted == fr.number
}

// state is the rollout's state in a word, and what it waits for: the
// reason of PlacementRolledOut, as the hub controller writes it, recomputed.
func (fr *fleetRollout) state() (string, string) {
	var waiting, invalid []string
	complete := true
	for _, p := range fr.placements {
		switch {
		case p.err != nil:
			invalid = append(invalid, fmt.Sprintf("placement %s: %v", p.name, p.err))
		case !p.result.Complete:
			complete = false
			if w := p.result.Waiting; w != nil {
				waiting = append(waiting, fmt.Sprintf("placement %s waits for approval %s", p.name, w))
			}
		}
	}
	switch {
	case fr.policyErr != nil:
		return workv1alpha1.ReasonInvalidRolloutStrategy, fr.policyErr.Error()
	case len(invalid) > 0:
		return workv1alpha1.ReasonInvalidRolloutStrategy, strings.Join(invalid, "; ")
	case complete:
		return workv1alpha1.ReasonComplete, "every cluster runs revision " + strconv.FormatInt(fr.number, 10)
	case fr.aborted():
		return rolloutv1alpha1.ReasonAborted, "no further cluster is started"
	case fr.policy.Paused:
		return rolloutv1alpha1.ReasonPaused, "no further cluster is started until it is resumed"
	case len(waiting) > 0:
		return rolloutv1alpha1.ReasonAwaitingApproval, strings.Join(waiting, "; ")
	}
	return workv1alpha1.ReasonProgressing, ""
}

// approvalName is the name of the RolloutApproval of one gate: readable
// when it fits a name, else the set's name and a hash of the gate.
func approvalName(set string, rev int64, placement, stage string, gate rollout.GateType) string {
	name := strings.ToLower(fmt.Sprintf("%s-r%d-%s-%s-%s", set, rev, placement, stage, gate))
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%s", set, rev, placement, stage, gate)))
	return fmt.Sprintf("%s-r%d-%s", cli.NamePrefix(set), rev, hex.EncodeToString(sum[:])[:10])
}

// stageNames lists the names of stages.
func stageNames(stages []rollout.Stage) []string {
	out := make([]string, 0, len(stages))
	for _, s := range stages {
		out = append(out, s.Name)
	}
	return out
}

// findStage returns the stage named name, nil when there is none.
func findStage(stages []rollout.Stage, name string) *rollout.Stage {
	i := slices.IndexFunc(stages, func(s rollout.Stage) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return &stages[i]
}
