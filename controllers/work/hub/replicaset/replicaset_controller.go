package replicaset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workset"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/written"
)

// ControllerName names the controller in logs and events.
const ControllerName = "manifestworkreplicaset"

// Event reasons.
const (
	eventInvalidOverride = "InvalidOverride"
	eventInvalidRollout  = "InvalidRolloutStrategy"
)

// Reconciler rolls the template of each ManifestWorkReplicaSet out to the
// clusters of its placements.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly, to tell a ManifestWork the
	// cache has not seen yet from one of someone else; Client when nil.
	APIReader client.Reader
	// Recorder records events on ManifestWorkReplicaSets.
	Recorder events.EventRecorder
	// Now returns the current time; time.Now when nil.
	Now func() time.Time

	// verified holds, by namespace and name, the UID of each ManifestChunk
	// of a set's namespace whose content was checked against its name: a
	// chunk's content never changes but by being deleted and created again.
	verified sync.Map
	// written holds, by set, the ManifestWorks the controller created or
	// updated that its cache does not show yet: during a rollout a set is
	// reconciled again before the cache shows the works it just wrote.
	written written.Writes[*workv1.ManifestWork]
}

// plan is one placementRef: its decisions, the clusters it owns (a cluster
// decided by several placements belongs to the first) and its rollout.
type plan struct {
	ref       workv1alpha1.LocalPlacementReference
	decisions placementDecisions
	groups    []rollout.Group
	owned     []string
	result    rollout.Result
	err       error
}

// desired is the ManifestWork a cluster should have.
type desired struct {
	spec      *workv1.ManifestWorkSpec
	hash      string
	placement string
	// takeOver is the set's take-over rule (workv1.TakeOverAnnotation), ""
	// without one; it is part of hash, so that a change rolls out as a
	// change of the template does.
	takeOver string
	// revision is the hash of the set's current revision
	// (pkg/rollout/revision), which the work records.
	revision string
}

// Reconcile follows the cluster-api skeleton: get, finalizer, delete or
// deploy, one status patch when the status changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, mwrs); err != nil {
		if apierrors.IsNotFound(err) {
			// setKey of the set that is gone.
			r.written.ForgetGroup(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mwrs.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, mwrs)
	}
	if _, err := patch.EnsureFinalizer(ctx, r.Client, mwrs, workv1alpha1.ManifestWorkReplicaSetFinalizer); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	h := patch.NewHelper(mwrs, r.Client)
	res, err := r.reconcileNormal(ctx, mwrs)
	if perr := h.Patch(ctx, mwrs); perr != nil {
		return patch.RetryStale(ctx, perr, apierrors.IsNotFound)
	}
	return res, err
}

// now returns the current time.
func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcileNormal creates, updates and deletes the ManifestWorks and fills
// in the status.
func (r *Reconciler) reconcileNormal(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet) (ctrl.Result, error) {
	works, err := r.listWorks(ctx, mwrs)
	if err != nil {
		return ctrl.Result{}, err
	}
	plans, err := r.readPlans(ctx, mwrs)
	if err != nil {
		return ctrl.Result{}, err
	}
	ov, err := workset.NewOverrider(&mwrs.Spec)
	var want map[string]desired
	if err == nil {
		want, err = r.desiredWorks(ctx, ov, plans, mwrs.Annotations[workv1.TakeOverAnnotation])
	}
	if err != nil {
		// A user error: report it and touch no ManifestWork until it is fixed.
		msg := "no ManifestWork created, updated or deleted: " + err.Error()
		if !hasCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, workv1alpha1.ReasonInvalidOverride, msg) {
			r.Recorder.Eventf(mwrs, nil, corev1.EventTypeWarning, eventInvalidOverride, "Reconcile", "%s", msg)
		}
		writeStatus(mwrs, plans, works, nil, nil)
		setCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonInvalidOverride, msg)
		return ctrl.Result{}, nil
	}

	ctl, err := r.readControl(ctx, mwrs)
	if err != nil {
		return patch.RetryStale(ctx, err, isStale)
	}
	for c, d := range want {
		d.revision = ctl.rev.hash
		want[c] = d
	}
	approvals, err := r.listApprovals(ctx, mwrs, ctl.rev)
	if err != nil {
		return ctrl.Result{}, err
	}

	now := r.now()
	out := outcome{}
	for _, p := range plans {
		in := rollout.Input{Strategy: p.ref.RolloutStrategy, Groups: p.groups, States: clusterStates(p, works, want, ctl), Now: now, Hold: ctl.err != nil}
		p.result, p.err = rollout.Compute(rollout.Controlled(in, ctl.policy, mwrs.Name, p.ref.Name, ctl.rev.number, ctl.rev.hash, approvals))
		if p.err != nil {
			r.Recorder.Eventf(mwrs, nil, corev1.EventTypeWarning, eventInvalidRollout, "Reconcile", "placement %s: %v", p.ref.Name, p.err)
			continue
		}
		if err := r.rollOutPlan(ctx, mwrs, p, works, want, now, &out); err != nil {
			reportPayload(mwrs, err)
			return ctrl.Result{}, err
		}
	}
	if ctl.policy.FailureStrategy != "" && ctl.err == nil && !ctl.aborted() && breached(plans) {
		if err := r.failRollout(mwrs, ctl); err != nil {
			return ctrl.Result{}, err
		}
	}
	behind, err := r.tidyWorks(ctx, setKey(mwrs), works, want)
	if err != nil {
		return ctrl.Result{}, err
	}
	out.stale = out.stale || behind
	r.reportOutcome(mwrs, plans, works, want, ctl, out)
	return ctrl.Result{RequeueAfter: requeueAfter(plans, out)}, nil
}

// reportPayload says in the set's status why its works wait, when err is
// a chunk of the template's payload missing from the set's namespace or
// failing its digest there: the set tries again when a chunk is created
// there, and with its backoff.
func reportPayload(mwrs *workv1alpha1.ManifestWorkReplicaSet, err error) {
	var missing *payload.MissingChunkError
	var digest *payload.DigestError
	switch {
	case errors.As(err, &missing):
		setCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, payloadv1alpha1.ReasonChunksMissing, err.Error())
	case errors.As(err, &digest):
		setCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, payloadv1alpha1.ReasonChunkDigestMismatch, err.Error())
	}
}

// readControl reads the set's rollout policy and records its current
// revision; an invalid policy is kept in the control's err.
func (r *Reconciler) readControl(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet) (*control, error) {
	limit, err := revision.HistoryLimit(mwrs)
	if err != nil {
		// Admission refuses such a value; one stored before keeps the default.
		limit = revision.DefaultHistoryLimit
	}
	ctl := &control{}
	ctl.policy, ctl.err = rolloutv1alpha1.PolicyOf(mwrs.Annotations)
	ctl.rev, err = r.syncRevisions(ctx, mwrs, limit)
	return ctl, err
}

// outcome is what the writes of a reconcile ran into, short of an error
// that ends it: ManifestWorks owned by someone else (foreign) or refused by
// admission (denied), and a cache found behind (stale).
type outcome struct {
	foreign, denied []string
	stale           bool
}

// clusterStates is the rollout state of each cluster a plan owns.
func clusterStates(p *plan, works map[string]*workv1.ManifestWork, want map[string]desired, ctl *control) map[string]rollout.ClusterState {
	states := map[string]rollout.ClusterState{}
	for _, c := range p.owned {
		mw := works[c]
		states[c] = rollout.WorkState(mw, mw != nil && mw.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] == want[c].hash, ctl.policy.HealthCondition)
	}
	return states
}

// rollOutPlan writes, writeConcurrency at a time, the ManifestWorks of the
// clusters a plan's rollout started, and records them in works. A foreign
// work, a denied write or a stale cache is added to out and the other
// clusters go on; any other failure is returned, once every write is done.
func (r *Reconciler) rollOutPlan(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet, p *plan,
	works map[string]*workv1.ManifestWork, want map[string]desired, now time.Time, out *outcome) error {
	log := ctrl.LoggerFrom(ctx)
	pending := p.result.Pending()
	written := make([]*workv1.ManifestWork, len(pending))
	errs := make([]error, len(pending))
	var writes errgroup.Group
	writes.SetLimit(writeConcurrency)
	for i := range pending {
		writes.Go(func() error {
			c := pending[i].Name
			written[i], errs[i] = r.applyWork(ctx, mwrs, c, works[c], want[c], now)
			return nil
		})
	}
	_ = writes.Wait() // the errors are in errs

	var failed error
	for i, c := range pending {
		if err := errs[i]; err != nil {
			switch {
			case isForeign(err):
				out.foreign = append(out.foreign, err.Error())
			case errors.Is(err, errStale):
				out.stale = true
			case isDenied(err):
				out.denied = append(out.denied, err.Error())
			default:
				failed = cmp.Or(failed, err)
			}
			continue
		}
		works[c.Name] = written[i]
		log.V(2).Info("Rolled out ManifestWork", "cluster", c.Name, "placement", p.ref.Name)
	}
	return failed
}

// requeueAfter is how soon to look again: when the soonest rollout asks,
// and no later than patch.StaleRetry after a stale cache or deniedRetry after a
// denied write; 0 when nothing asks.
func requeueAfter(plans []*plan, out outcome) time.Duration {
	var requeue time.Duration
	for _, p := range plans {
		if d := p.result.RequeueAfter; p.err == nil && d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	if out.stale && (requeue == 0 || requeue > patch.StaleRetry) {
		requeue = patch.StaleRetry
	}
	if len(out.denied) > 0 && (requeue == 0 || requeue > deniedRetry) {
		requeue = deniedRetry
	}
	return requeue
}

// reportOutcome writes the status, then lets foreign and denied
// ManifestWorks override ManifestworkApplied; a new denial is also an Event.
func (r *Reconciler) reportOutcome(mwrs *workv1alpha1.ManifestWorkReplicaSet, plans []*plan, works map[string]*workv1.ManifestWork,
	want map[string]desired, ctl *control, out outcome) {
	deniedMsg := joinLimited(out.denied)
	reportDenied := len(out.denied) > 0 &&
		!hasCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, workv1alpha1.ReasonManifestWorkDenied, deniedMsg)
	writeStatus(mwrs, plans, works, want, ctl)
	if len(out.foreign) > 0 {
		setCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonNotAsExpected, joinLimited(out.foreign))
	}
	if reportDenied {
		r.Recorder.Eventf(mwrs, nil, corev1.EventTypeWarning, workv1alpha1.ReasonManifestWorkDenied, "Reconcile", "%s", deniedMsg)
	}
	if len(out.denied) > 0 {
		setCondition(mwrs, workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonManifestWorkDenied, deniedMsg)
	}
}

// writeConcurrency bounds the ManifestWork writes of one reconcile in
// flight at once. One at a time, a rollout to thousands of clusters waits
// on the API server's round trip for each; the API server's priority and
// fairness bounds what it serves of them.
const writeConcurrency = 32

// breached reports whether a plan's failures passed its maxFailures.
func breached(plans []*plan) bool {
	for _, p := range plans {
		if p.err == nil && p.result.MaxFailuresBreached {
			return true
		}
	}
	return false
}

// readPlans reads the decisions of every placementRef and assigns each
// decided cluster to the first placement deciding it.
func (r *Reconciler) readPlans(ctx context.Context, mwrs *workv1alpha1.ManifestWorkReplicaSet) ([]*plan, error) {
	seen := map[string]bool{}
	var plans []*plan
	for _, ref := range mwrs.Spec.PlacementRefs {
		d, err := readDecisions(ctx, r.Client, mwrs.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		p := &plan{ref: ref, decisions: d}
		p.groups, p.owned = rollout.Claim(d.groups, seen)
		plans = append(plans, p)
	}
	return plans, nil
}

// desiredWorks computes the spec of every decided cluster's ManifestWork.
func (r *Reconciler) desiredWorks(ctx context.Context, ov *workset.Overrider, plans []*plan, takeOver string) (map[string]desired, error) {
	want := map[string]desired{}
	for _, p := range plans {
		for _, c := range p.owned {
			var lbls map[string]string
			if ov.NeedsLabels() {
				mc := &clusterv1.ManagedCluster{}
				if err := r.Client.Get(ctx, client.ObjectKey{Name: c}, mc); client.IgnoreNotFound(err) != nil {
					return nil, fmt.Errorf("get ManagedCluster %s: %w", c, err)
				}
				lbls = mc.Labels
			}
			spec, hash, err := ov.SpecFor(c, lbls)
			if err != nil {
				return nil, fmt.Errorf("cluster %s: %w", c, err)
			}
			if takeOver != "" {
				hash = workset.WithTakeOver(hash, takeOver)
			}
			want[c] = desired{spec: spec, hash: hash, placement: p.ref.Name, takeOver: takeOver}
		}
	}
	return want, nil
}

// tidyWorks deletes the works of clusters no longer decided and points the
// placementname label of current works at the placement owning their cluster.
// works is updated in place; stale reports that the cache was behind.
func (r *Reconciler) tidyWorks(ctx context.Context, group string, works map[string]*workv1.ManifestWork, want map[string]desired) (stale bool, err error) {
	log := ctrl.LoggerFrom(ctx)
	for cluster, mw := range works {
		if d, ok := want[cluster]; ok {
			if mw.Annotations[workv1alpha1.ManifestWorkSpecHashAnnotationKey] != d.hash {
				continue
			}
			updated, err := r.relabel(ctx, group, mw, d.placement, d.revision)
			switch {
			case errors.Is(err, errStale):
				stale = true
			case err != nil:
				return stale, err
			default:
				works[cluster] = updated
			}
			continue
		}
		if err := r.deleteWork(ctx, group, mw); err != nil {
			return stale, err
		}
		delete(works, cluster)
		log.V(2).Info("Deleted ManifestWork of a cluster no longer decided", "cluster", cluster)
	}
	return stale, nil
}
