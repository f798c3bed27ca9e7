package agent

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// reportDiff is reconcileNormal for a work in ReportDiff mode
// (workv1.ApplyModeAnnotation): every manifest is applied as a server-side
// dry run with its update strategy, take-over rule and executor checks, and
// its Diff condition says what applying it would change. Nothing on the
// managed cluster changes and the AppliedManifestWork records nothing new,
// so that a work switched to ReportDiff keeps the objects it applied and a
// diff work owns none. The objects are watched, so that the report follows
// changes to them. modeErr is why the annotation holds no mode: nothing is
// done then. Each manifest's condition is computed as soon as its dry run
// returns, and of its objects only what the watches need is kept.
func (r *workReconciler) reportDiff(ctx context.Context, work *workv1.ManifestWork, manifests manifestSource, req apply.Request, modeErr error) (ctrl.Result, error) {
	gen := work.Generation
	if modeErr != nil {
		meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{Type: workv1.WorkDiffReported, Status: metav1.ConditionFalse,
			Reason: workv1.DiffReasonInvalidApplyMode, Message: modeErr.Error() + ": nothing is applied nor compared until it holds one", ObservedGeneration: gen})
		return ctrl.Result{}, nil
	}
	decide := req.Decide
	req.Decide = func(m workv1.ManifestResourceMeta) apply.Decision {
		d := decide(m)
		d.DryRun, d.Frozen = true, false
		return d
	}
	// tracked are the results with the object as it is on the cluster (the
	// dry run's Before), for the watches.
	tracked := make([]apply.Result, manifests.Len())
	diffs := make([]metav1.Condition, manifests.Len())
	if err := manifests.Each(ctx, func(m *apply.Manifest) {
		req.Manifest = m
		res := r.applier.Apply(ctx, req)
		diffs[m.Ordinal] = diffCondition(&res, gen)
		res.Object, res.Before, res.Change = res.Before, nil, apply.ChangeNone
		settle(work, &res)
		tracked[m.Ordinal] = res
	}); err != nil {
		return ctrl.Result{}, r.payloadUnreadable(work, err)
	}

	prev := work.Status.ResourceStatus.Manifests
	out := make([]workv1.ManifestCondition, 0, len(tracked))
	differ, failed := 0, 0
	for i := range tracked {
		res := &tracked[i]
		mc := workv1.ManifestCondition{ResourceMeta: res.Meta, Conditions: []metav1.Condition{}}
		if old := findManifest(prev, res.Meta); old != nil {
			mc.Conditions = append(mc.Conditions, old.Conditions...)
		}
		c := diffs[i]
		meta.SetStatusCondition(&mc.Conditions, c)
		switch c.Status {
		case metav1.ConditionTrue:
			differ++
		case metav1.ConditionUnknown:
			failed++
		}
		out = append(out, mc)
	}
	work.Status.ResourceStatus.Manifests = out
	wc := metav1.Condition{Type: workv1.WorkDiffReported, Status: metav1.ConditionTrue, Reason: workv1.DiffReasonNoDiff, ObservedGeneration: gen,
		Message: fmt.Sprintf("applying the %d manifests changes nothing on the cluster (report only: nothing applied)", len(tracked))}
	switch {
	case failed > 0:
		wc.Status, wc.Reason = metav1.ConditionFalse, workv1.DiffReasonFailed
		wc.Message = fmt.Sprintf("%d of %d manifests could not be compared; see their Diff conditions (report only: nothing applied)", failed, len(tracked))
	case differ > 0:
		wc.Reason = workv1.DiffReasonDiffers
		wc.Message = fmt.Sprintf("applying %d of %d manifests would change the cluster; see their Diff conditions (report only: nothing applied)", differ, len(tracked))
	}
	meta.SetStatusCondition(&work.Status.Conditions, wc)
	r.watcher.Track(work.Name, tracked)

	key := client.ObjectKeyFromObject(work)
	if failed > 0 {
		return ctrl.Result{RequeueAfter: retryDelay(r.failures.When(key), false, tracked)}, nil
	}
	r.failures.Forget(key)
	return ctrl.Result{RequeueAfter: wait.Jitter(r.resync, 0.5)}, nil
}

// diffCondition is the Diff condition of one dry-run result.
func diffCondition(res *apply.Result, gen int64) metav1.Condition {
	c := metav1.Condition{Type: workv1.ManifestDiff, ObservedGeneration: gen}
	if res.Err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, workv1.DiffReasonFailed, res.Err.Error()
		return c
	}
	name := res.Meta.Kind + " " + res.Meta.Name
	if res.Meta.Namespace != "" {
		name = res.Meta.Kind + " " + res.Meta.Namespace + "/" + res.Meta.Name
	}
	d, err := apply.DiffOf(name, res.Before, res.Object)
	switch {
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, workv1.DiffReasonFailed, "compare: "+err.Error()
	case d.Created:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, workv1.DiffReasonWouldCreate, d.Text
	case d.Differs:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, workv1.DiffReasonDiffers, d.Text
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.DiffReasonNoDiff, "applying the manifest changes nothing"
	}
	return c
}
