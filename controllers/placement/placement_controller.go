package placement

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/placement"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/written"
)

// eventMisconfigured is the reason of the Warning event recorded when a
// placement becomes misconfigured (OCM's condition reason).
const eventMisconfigured = clusterv1beta1.ReasonMisconfigured

// Reconciler schedules one Placement: it computes the decisions with
// pkg/placement from the objects in the manager's cache, writes the
// PlacementDecisions that changed and patches the status.
type Reconciler struct {
	// Client reads from the manager's cache.
	Client client.Client
	// Writer writes to the API server; it may be Client.
	Writer client.Client
	// Recorder records events on Placements.
	Recorder events.EventRecorder
	// Scheduler holds the scheduling rules (shared by every run).
	Scheduler *placement.Scheduler
	// Now returns the scheduling time; time.Now when nil.
	Now func() time.Time

	decisions *decisionAggregate
	own       *ownWrites
	// written holds the PlacementDecisions the scheduler wrote that its
	// cache may not show yet, by placement (placementKey).
	written written.Writes[*clusterv1beta1.PlacementDecision]
	// index knows the placements the cluster, set, binding and score
	// events may concern; Reconcile feeds it.
	index *placementIndex
	// stores, when set, serve the full lists of clusters and scores without
	// copies; without them the lists come from Client.
	stores *stores
}

// Reconcile schedules the placement req and writes its decisions and status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		// A deleted placement's decisions go with it: they are owned by it.
		if apierrors.IsNotFound(err) {
			r.index.forget(req.NamespacedName)
			r.written.ForgetGroup(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() || p.SchedulingDisabled() {
		r.index.forget(req.NamespacedName)
		r.written.ForgetGroup(req.String())
		return ctrl.Result{}, nil
	}
	// Before anything is read: see placementIndex.
	filter := r.index.observe(p)
	existing, err := r.existingDecisions(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	in, err := r.input(ctx, p, existing)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, settled := r.settle(p, in, filter)
	r.index.scheduled(req.NamespacedName, res.Selected)

	desired := desiredDecisions(p, res.Groups)
	written, err := r.writeDecisions(ctx, p, existing, desired)
	if err != nil {
		// A write based on a cache that has not yet seen the scheduler's
		// previous writes meets a conflict, or a create of an object that
		// exists: a quiet short requeue.
		return patch.RetryStale(ctx, err, apierrors.IsAlreadyExists)
	}
	was := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured).DeepCopy()
	h := patch.NewHelper(p, r.Writer)
	setStatus(p, res, desired)
	if err := h.Patch(ctx, p); err != nil {
		return patch.RetryStale(ctx, err, apierrors.IsAlreadyExists)
	}
	requeue := res.RequeueAfter
	if written > 0 {
		log.V(2).Info("Wrote placement decisions", "placement", klog.KObj(p), "written", written, "selected", res.Selected)
	}
	// Decisions settle didn't bring to hold: the scheduler's own writes
	// trigger nothing, so run once more, which writes nothing when they
	// hold.
	if written > 0 && !settled {
		if requeue == 0 || requeue > settleRetry {
			requeue = settleRetry
		}
	}
	r.recordMisconfigured(was, p)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// settleRetry is when a placement whose decisions were just written is
// scheduled again, so that it reaches the decisions that hold, when settle
// did not.
const settleRetry = time.Second

// settleRuns bounds the runs of settle.
const settleRuns = 3

// settle schedules p and, with Steady weighted, schedules it again over
// the clusters the run decided until they hold: the decisions about to be
// written are an input of the next run (Steady scores the clusters they
// hold, so every score changes once they are written). Written as the
// first run left them, a placement's decisions were written twice, the
// second time a second later with only the scores changed; at a thousand
// placements that was a third of a busy hub's decision writes. settled is
// false when the last run's decisions did not hold yet.
func (r *Reconciler) settle(p *clusterv1beta1.Placement, in placement.Input, filter placement.PredicateFilter) (res placement.Result, settled bool) {
	res = r.schedule(in, filter)
	if !placement.SteadyWeighted(&p.Spec.PrioritizerPolicy) {
		return res, true
	}
	for range settleRuns - 1 {
		decided := decidedClusters(res)
		if sameClusters(decided, in.Decided) {
			return res, true
		}
		in.Decided = decided
		res = r.schedule(in, filter)
	}
	return res, sameClusters(decidedClusters(res), in.Decided)
}

// decidedClusters are the clusters res decides, in decision order.
func decidedClusters(res placement.Result) []string {
	out := make([]string, 0, res.Selected)
	for _, g := range res.Groups {
		for _, d := range g.Decisions {
			out = append(out, d.ClusterName)
		}
	}
	return out
}

// sameClusters reports whether a and b hold the same clusters, in any
// order.
func sameClusters(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, c := range a {
		in[c] = true
	}
	for _, c := range b {
		if !in[c] {
			return false
		}
	}
	return true
}

// schedule runs the scheduler over the clusters that the placement's
// predicates may match, the only ones it can rank, spread, group or decide:
// at 10,000 clusters and a selector matching 100 of them, that saves the
// scheduler (and the garbage collector) the explanation of 9,900 clusters
// the controller never reads. The result is the same but for one figure:
// the PlacementSatisfied reason of a placement that selects nothing tells
// whether its sets have any member at all (AllManagedClusterSetsEmpty or
// NoManagedClusterMatched), so when nothing is selected the run is made
// again over every cluster.
func (r *Reconciler) schedule(in placement.Input, filter placement.PredicateFilter) placement.Result {
	if filter.MatchesAll() {
		return r.Scheduler.Schedule(in)
	}
	all := in.Clusters
	in.Clusters = make([]*clusterv1.ManagedCluster, 0, len(all)/8)
	for _, c := range all {
		if filter.MayMatch(c) {
			in.Clusters = append(in.Clusters, c)
		}
	}
	if res := r.Scheduler.Schedule(in); res.Selected > 0 {
		return res
	}
	in.Clusters = all
	return r.Scheduler.Schedule(in)
}

// existingDecisions lists the PlacementDecisions of p from the cache.
func (r *Reconciler) existingDecisions(ctx context.Context, p *clusterv1beta1.Placement) ([]*clusterv1beta1.PlacementDecision, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingFields{decisionPlacementIndex: p.Name}); err != nil {
		return nil, fmt.Errorf("list PlacementDecisions of %s/%s: %w", p.Namespace, p.Name, err)
	}
	out := make([]*clusterv1beta1.PlacementDecision, len(list.Items))
	byName := make(map[string]int, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
		byName[list.Items[i].Name] = i
	}
	// The decisions the scheduler wrote that the cache does not show yet
	// stand in for what it shows: otherwise the run that follows a write
	// (settleRetry) would write them again from the older version, a
	// conflict and a retry every patch.StaleRetry until the cache caught
	// up, a thousand placements at once on a busy hub.
	r.written.Overlay(placementKey(p), func(key types.NamespacedName) *clusterv1beta1.PlacementDecision {
		if i, ok := byName[key.Name]; ok {
			return out[i]
		}
		return nil
	}, func(key types.NamespacedName, d *clusterv1beta1.PlacementDecision) {
		if i, ok := byName[key.Name]; ok {
			out[i] = d
			return
		}
		byName[key.Name] = len(out)
		out = append(out, d)
	})
	return out, nil
}

// placementKey is a placement's <namespace>/<name>: the group of its
// decisions in Reconciler.written, and its reconcile request's String.
func placementKey(p *clusterv1beta1.Placement) string {
	return client.ObjectKeyFromObject(p).String()
}

// input gathers what scheduling p reads. Lists of objects the scheduler
// only reads skip the cache's deep copy: scheduling a thousand placements
// would otherwise copy every cluster a thousand times.
func (r *Reconciler) input(ctx context.Context, p *clusterv1beta1.Placement, existing []*clusterv1beta1.PlacementDecision) (placement.Input, error) {
	in := placement.Input{Placement: p, Now: time.Now()}
	if r.Now != nil {
		in.Now = r.Now()
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return in, fmt.Errorf("list ManagedClusterSetBindings in %s: %w", p.Namespace, err)
	}
	for i := range bindings.Items {
		in.Bindings = append(in.Bindings, &bindings.Items[i])
	}
	sets := &clusterv1beta2.ManagedClusterSetList{}
	if err := r.Client.List(ctx, sets, client.UnsafeDisableDeepCopy); err != nil {
		return in, fmt.Errorf("list ManagedClusterSets: %w", err)
	}
	for i := range sets.Items {
		in.ClusterSets = append(in.ClusterSets, &sets.Items[i])
	}
	if len(in.Bindings) > 0 {
		var err error
		if in.Clusters, err = r.listClusters(ctx); err != nil {
			return in, err
		}
		if usesScores(p) {
			if in.Scores, err = r.listScores(ctx); err != nil {
				return in, err
			}
		}
	}
	for _, d := range existing {
		for _, dec := range d.Status.Decisions {
			if dec.ClusterName != "" {
				in.Decided = append(in.Decided, dec.ClusterName)
			}
		}
	}
	in.OtherDecisions = r.decisions.others(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	return in, nil
}

// listClusters returns every ManagedCluster of the cache, read-only.
func (r *Reconciler) listClusters(ctx context.Context) ([]*clusterv1.ManagedCluster, error) {
	if r.stores != nil {
		return r.stores.listClusters(), nil
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list ManagedClusters: %w", err)
	}
	out := make([]*clusterv1.ManagedCluster, len(clusters.Items))
	for i := range clusters.Items {
		out[i] = &clusters.Items[i]
	}
	return out, nil
}

// listScores returns every AddOnPlacementScore of the cache, read-only.
func (r *Reconciler) listScores(ctx context.Context) ([]*clusterv1alpha1.AddOnPlacementScore, error) {
	if r.stores != nil {
		return r.stores.listScores(), nil
	}
	scores := &clusterv1alpha1.AddOnPlacementScoreList{}
	if err := r.Client.List(ctx, scores, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list AddOnPlacementScores: %w", err)
	}
	out := make([]*clusterv1alpha1.AddOnPlacementScore, len(scores.Items))
	for i := range scores.Items {
		out[i] = &scores.Items[i]
	}
	return out, nil
}

// usesScores reports whether scheduling p can read AddOnPlacementScores: an
// AddOn prioritizer or a CEL selector (which may call scores()).
func usesScores(p *clusterv1beta1.Placement) bool {
	for _, c := range p.Spec.PrioritizerPolicy.Configurations {
		if c.ScoreCoordinate != nil && c.ScoreCoordinate.Type == clusterv1beta1.ScoreCoordinateTypeAddOn {
			return true
		}
	}
	for _, pred := range p.Spec.Predicates {
		if len(pred.RequiredClusterSelector.CelSelector.CelExpressions) > 0 {
			return true
		}
	}
	return false
}

// recordMisconfigured records a Warning event when the placement became
// misconfigured or its configuration error changed; was is its Misconfigured
// condition before the reconcile.
func (r *Reconciler) recordMisconfigured(was *metav1.Condition, after *clusterv1beta1.Placement) {
	now := meta.FindStatusCondition(after.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured)
	if r.Recorder == nil || now == nil || now.Status != "True" {
		return
	}
	if was != nil && was.Status == now.Status && was.Message == now.Message {
		return
	}
	r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, eventMisconfigured, "Schedule", "placement %s is misconfigured: %s", after.Name, now.Message)
}
