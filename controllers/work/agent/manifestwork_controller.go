package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/patch"
)

// Retry delays of a ManifestWork whose manifests did not all apply, or
// whose removed objects are still being deleted: exponential per work.
const (
	failureBaseDelay = 100 * time.Millisecond
	failureMaxDelay  = 5 * time.Minute
	// retrySoonDelay caps the retry delay of waits expected to end soon.
	retrySoonDelay = 250 * time.Millisecond
	// deletionCheckInterval is how often a deleted ManifestWork looks again
	// whether its AppliedManifestWork is gone, in case the event was missed.
	deletionCheckInterval = 10 * time.Second
)

// workReconciler applies one cluster's ManifestWorks from one hub to the
// managed cluster and reports their status on the hub.
type workReconciler struct {
	// hub reads ManifestWorks from the session's cache and writes them;
	// hubReader reads ManifestChunks around the cache.
	hub       client.Client
	hubReader client.Reader
	// setChunks reads the chunks of ManifestWorkReplicaSets' payloads
	// through the hub tunnel's server; nil reads the cluster's namespace
	// only.
	setChunks *hubtunnel.ChunkClient
	// payloads keeps the works' last verified large payloads.
	payloads *payloadCache
	// spoke reads AppliedManifestWorks from the manager's cache and writes
	// them; spokeReader reads around the cache.
	spoke       client.Client
	spokeReader client.Reader
	applier     *apply.Applier

	cluster, agentID, hubHash string
	resync                    time.Duration
	// statusSync is how often a work with Poll feedback rules is read again
	// (see pollsFeedback); 0 never.
	statusSync time.Duration
	// failures paces the retries of works that did not fully apply.
	failures workqueue.TypedRateLimiter[types.NamespacedName]
	// watcher watches the applied objects; nil in unit tests.
	watcher *resourceWatcher
	// rules evaluates condition rules.
	rules *ruleEvaluator
	// records writes the apply records (ManifestWorkApplyLatency); nil
	// records nothing.
	records *applyRecorder
	// executor checks what a work's executor may do (nil checks nothing);
	// a work it denied something is tried again after executorRetry.
	executor      *executorChecker
	executorRetry time.Duration
	// drifts finds changes made to applied objects on the managed cluster,
	// recorder reports them as Events on the hub; both may be nil.
	drifts   *driftDetector
	recorder record.EventRecorder
}

// Reconcile brings one ManifestWork's objects on the managed cluster in line
// with it, or removes them once it is deleted.
func (r *workReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	work := &workv1.ManifestWork{}
	if err := r.hub.Get(ctx, req.NamespacedName, work); err != nil {
		// A ManifestWork gone without its finalizer leaves its
		// AppliedManifestWork to eviction (appliedmanifestwork_eviction.go).
		if apierrors.IsNotFound(err) {
			r.watcher.Forget(req.Name)
			r.records.forget(req.Name)
			r.payloads.forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, work)
	}
	if meta.IsStatusConditionTrue(work.Status.Conditions, workv1.WorkComplete) {
		// A work whose manifests with a Complete condition rule all completed
		// is frozen (aggregateRuleConditions sets Complete).
		_, err := patch.EnsureFinalizer(ctx, r.hub, work, workv1.ManifestWorkFinalizer)
		return patch.RetryStale(ctx, err, apierrors.IsNotFound)
	}
	// The work's finalizer and its AppliedManifestWork are written at once
	// (one round trip each, to the hub and to the managed cluster); nothing
	// is applied before both are in place.
	var amw *workv1.AppliedManifestWork
	var amwErr error
	var wg sync.WaitGroup
	name, labels := work.Name, work.Labels // EnsureFinalizer replaces *work
	wg.Go(func() { amw, amwErr = r.ensureAppliedWork(ctx, name, labels) })
	_, finErr := patch.EnsureFinalizer(ctx, r.hub, work, workv1.ManifestWorkFinalizer)
	wg.Wait()
	switch {
	case amwErr != nil:
		return ctrl.Result{}, errors.Join(finErr, amwErr)
	case finErr != nil:
		return patch.RetryStale(ctx, finErr, apierrors.IsNotFound)
	case amw == nil:
		// The old record is still being finalized; its deletion event
		// brings the work back.
		return ctrl.Result{}, nil
	}

	h := patch.NewHelper(work, r.hub)
	// A large payload is applied only once all of it is present and
	// verified; until then the cluster keeps the generation it runs.
	manifests, result, ok, err := r.stagePayload(ctx, work)
	var record func(context.Context) error
	if ok {
		result, record, err = r.reconcileNormal(ctx, work, amw, manifests)
	}
	// The AppliedManifestWork's record of the applied objects and the
	// work's status are written at once too.
	var recordErr error
	if record != nil {
		wg.Go(func() { recordErr = record(ctx) })
	}
	perr := h.Patch(ctx, work)
	wg.Wait()
	if perr == nil {
		r.drifts.written(work)
	}
	if client.IgnoreNotFound(perr) != nil {
		err = errors.Join(err, perr)
	}
	return result, errors.Join(err, recordErr)
}

// reconcileNormal applies the manifests, removes the objects of manifests
// that left the work and sets work.Status. record, when not nil, writes the
// applied objects to the AppliedManifestWork; the caller runs it. Each
// manifest is applied as manifests hands it over, its drift found at once,
// and of its objects only what the status needs is kept (settle), so that
// memory does not grow with the manifests' size.
func (r *workReconciler) reconcileNormal(ctx context.Context, work *workv1.ManifestWork, amw *workv1.AppliedManifestWork, manifests manifestSource) (_ ctrl.Result, record func(context.Context) error, _ error) {
	key := client.ObjectKeyFromObject(work)

	results := make([]apply.Result, manifests.Len())
	owner := apply.OwnerReference(amw)
	prev := work.Status.ResourceStatus.Manifests
	recorded := map[workv1.ResourceIdentifier]bool{}
	for _, res := range amw.Status.AppliedResources {
		recorded[res.ResourceIdentifier] = true
	}
	rule, ruleErr := workv1.TakeOverRuleOf(work.Annotations)
	decide := func(m workv1.ManifestResourceMeta) apply.Decision {
		id := workv1.ResourceIdentifier{Group: m.Group, Resource: m.Resource, Name: m.Name, Namespace: m.Namespace}
		d := apply.Decision{Owned: apply.OwnedByTheWork(id, work.Spec.DeleteOption), New: !recorded[id], TakeOver: rule, TakeOverInvalid: ruleErr}
		if old := findManifest(prev, m); old != nil && meta.IsStatusConditionTrue(old.Conditions, workv1.ManifestComplete) {
			d.Frozen = true
		}
		if cfg := work.Spec.FindManifestConfig(m); cfg != nil {
			d.Strategy = cfg.UpdateStrategy
		}
		return d
	}
	authorize := r.executor.authorizer(work)
	if mode, err := workv1.ApplyModeOf(work.Annotations); err != nil || mode == workv1.ApplyModeReportDiff {
		result, err := r.reportDiff(ctx, work, manifests, apply.Request{Owner: owner, Decide: decide, Authorize: authorize}, err)
		return result, nil, err
	}
	run := r.records.begin(work, len(results))
	var found []drift
	if err := manifests.Each(ctx, func(m *apply.Manifest) {
		res := r.applier.Apply(ctx, apply.Request{Manifest: m, Owner: owner, Decide: decide, Authorize: authorize})
		if d, ok := r.drifts.detect(work, prev, &res, m.Object, time.Now()); ok {
			found = append(found, d)
		}
		settle(work, &res)
		results[m.Ordinal] = res
	}); err != nil {
		// Some manifests may be applied already, at the generation
		// verified whole: the next reconcile applies the rest.
		return ctrl.Result{}, nil, r.payloadUnreadable(work, err)
	}
	for i := range results {
		run.resource(&results[i], findManifest(prev, results[i].Meta))
	}
	run.end(len(results))

	pending, denied, record, err := r.updateAppliedResources(ctx, work, amw, results)
	r.watcher.Track(work.Name, results)
	setWorkStatus(work, r.observe(ctx, work, results), r.rules)
	r.recordDrifts(work, r.drifts.carry(key, found))
	for _, d := range found {
		ctrl.LoggerFrom(ctx).Info("Applied resource drifted on the managed cluster", "reason", d.reason, "detail", d.message())
		if r.recorder != nil {
			r.recorder.Event(work, corev1.EventTypeWarning, d.reason, d.message())
		}
	}

	switch {
	case err != nil:
		return ctrl.Result{}, record, err
	case pending || anyFailed(results):
		return ctrl.Result{RequeueAfter: retryDelay(r.failures.When(key), pending, results)}, record, nil
	case denied || anyDenied(results):
		// The executor's rights change on the managed cluster, not through
		// the work: look again later without counting it as a failure.
		r.failures.Forget(key)
		return ctrl.Result{RequeueAfter: r.executorRetryInterval()}, record, nil
	default:
		r.failures.Forget(key)
		next := wait.Jitter(r.resync, 0.5)
		if r.statusSync > 0 && pollsFeedback(work) {
			next = min(next, wait.Jitter(r.statusSync, 0.1))
		}
		return ctrl.Result{RequeueAfter: next}, record, nil
	}
}

// observe returns the results with each failed manifest's object looked up,
// so that its Available condition says whether the object exists.
func (r *workReconciler) observe(ctx context.Context, work *workv1.ManifestWork, results []apply.Result) []manifestObservation {
	out := make([]manifestObservation, len(results))
	for i := range results {
		res := &results[i]
		out[i] = manifestObservation{Result: res}
		switch {
		case res.Frozen:
		case res.Err == nil:
			out[i].exists = res.Object != nil
			out[i].live = res.Object
		case res.GVR.Resource == "":
			out[i].unknownMeta = true
		default:
			live, err := r.applier.Get(ctx, res)
			out[i].exists = err == nil
			if err == nil {
				out[i].live = liveFor(work, res.Meta, live)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				out[i].fetchErr = err
			}
		}
	}
	return out
}

// ensureAppliedWork returns the work's AppliedManifestWork, creating it with
// its finalizer when missing. It returns nil while an old record of the same
// name is being deleted.
func (r *workReconciler) ensureAppliedWork(ctx context.Context, workName string, labels map[string]string) (*workv1.AppliedManifestWork, error) {
	name := workv1.AppliedManifestWorkName(r.hubHash, workName)
	amw := &workv1.AppliedManifestWork{}
	err := r.spoke.Get(ctx, types.NamespacedName{Name: name}, amw)
	if apierrors.IsNotFound(err) {
		amw = &workv1.AppliedManifestWork{
			ObjectMeta: metav1.ObjectMeta{
				Name:       name,
				Labels:     labels,
				Finalizers: []string{workv1.AppliedManifestWorkFinalizer},
			},
			Spec: workv1.AppliedManifestWorkSpec{HubHash: r.hubHash, AgentID: r.agentID, ManifestWorkName: workName},
		}
		err = r.spoke.Create(ctx, amw)
		if apierrors.IsAlreadyExists(err) {
			// The cache has not seen our earlier create yet.
			err = r.spokeReader.Get(ctx, types.NamespacedName{Name: name}, amw)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("AppliedManifestWork %s: %w", name, err)
	}
	if !amw.DeletionTimestamp.IsZero() {
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for the previous AppliedManifestWork to be finalized", "appliedManifestWork", name)
		return nil, nil
	}
	if amw.Spec.AgentID != r.agentID && r.agentID != "" {
		h := patch.NewHelper(amw, r.spoke)
		amw.Spec.AgentID = r.agentID
		if err := h.Patch(ctx, amw); err != nil {
			return nil, fmt.Errorf("update agentID of AppliedManifestWork %s: %w", name, err)
		}
	}
	return amw, nil
}

// anyFailed reports whether some manifest failed to apply for another
// reason than its executor's rights.
func anyFailed(results []apply.Result) bool {
	for i := range results {
		if results[i].Err != nil && !isExecutorDenied(results[i].Err) {
			return true
		}
	}
	return false
}

// anyDenied reports whether the executor was denied some manifest.
func anyDenied(results []apply.Result) bool {
	for i := range results {
		if isExecutorDenied(results[i].Err) {
			return true
		}
	}
	return false
}

// executorRetryInterval is when a work whose executor was denied something
// is tried again.
func (r *workReconciler) executorRetryInterval() time.Duration {
	if r.executorRetry <= 0 {
		return DefaultExecutorRetryInterval
	}
	return r.executorRetry
}

// retryDelay is when a work that did not fully apply is tried again, given
// its exponential backoff. Waiting for removed objects, or for the kinds of
// a CustomResourceDefinition the work itself applies, is expected to end
// within moments: those retry within retrySoonDelay. Other failures (an
// invalid manifest, a missing permission, a kind nobody defines) wait at
// least a second, doubling up to failureMaxDelay.
func retryDelay(backoff time.Duration, pending bool, results []apply.Result) time.Duration {
	crdApplied, noMatch := false, false
	for i := range results {
		r := &results[i]
		if r.Err == nil && r.Meta.Kind == "CustomResourceDefinition" {
			crdApplied = true
		}
		noMatch = noMatch || r.IsNoMatch()
	}
	if pending || (crdApplied && noMatch) {
		return min(backoff, retrySoonDelay)
	}
	return max(backoff, time.Second)
}
