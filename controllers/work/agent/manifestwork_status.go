package agent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Condition messages, as OCM words them.
const (
	msgManifestApplied     = "Apply manifest complete"
	msgManifestWorkApplied = "Apply manifest work complete"
	msgManifestWorkFailed  = "Failed to apply manifest work"
	msgResourceAvailable   = "Resource is available"
	msgResourceMissing     = "Resource is not available"
	msgIncompleteMeta      = "Resource meta is incomplete"
	msgWorkDeleting        = "Deleting the applied resources"
)

// manifestObservation is what one reconcile learned about one manifest.
type manifestObservation struct {
	*apply.Result
	// exists says whether the object exists on the managed cluster.
	exists bool
	// unknownMeta says the manifest could not be decoded or mapped.
	unknownMeta bool
	// fetchErr is why looking the object up failed.
	fetchErr error
	// live is the object on the managed cluster, when it could be read.
	live *unstructured.Unstructured
}

// settle drops from a manifest's apply result what the work's status does
// not need once the manifest's drift is found: the object as the apply
// found it, and the live object's content unless a rule reads it
// (liveFor). Then a work's results hold a few hundred bytes per manifest,
// whatever the manifests' size.
func settle(work *workv1.ManifestWork, res *apply.Result) {
	res.Before = nil
	res.Object = liveFor(work, res.Meta, res.Object)
}

// liveFor returns what the status keeps of live, the object of manifest m:
// all of it when a feedback or condition rule of m reads it, else its
// metadata, whose UID, resource version and owners the AppliedManifestWork,
// the apply records and the watches use.
func liveFor(work *workv1.ManifestWork, m workv1.ManifestResourceMeta, live *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		return nil
	}
	if cfg := work.Spec.FindManifestConfig(m); cfg != nil && (len(cfg.FeedbackRules) > 0 || len(cfg.ConditionRules) > 0) {
		return live
	}
	return objectMeta(live)
}

// setWorkStatus sets the manifests' and the work's Applied and Available
// conditions from the observations. Conditions of other types (feedback,
// condition rules) and status feedback of manifests whose identity did not
// change are kept, so that later controllers can own them.
func setWorkStatus(work *workv1.ManifestWork, obs []manifestObservation, rules *ruleEvaluator) {
	gen := work.Generation
	prev := work.Status.ResourceStatus.Manifests
	manifests := make([]workv1.ManifestCondition, 0, len(obs))
	for _, o := range obs {
		mc := workv1.ManifestCondition{ResourceMeta: o.Meta, Conditions: []metav1.Condition{}}
		old := findManifest(prev, o.Meta)
		if old != nil {
			mc.Conditions = append(mc.Conditions, old.Conditions...)
			mc.StatusFeedbacks = *old.StatusFeedbacks.DeepCopy()
		}
		if o.Frozen && old != nil {
			// A completed manifest keeps its last status.
			manifests = append(manifests, mc)
			continue
		}
		meta.SetStatusCondition(&mc.Conditions, manifestApplied(o, gen))
		meta.SetStatusCondition(&mc.Conditions, manifestAvailable(o, gen))
		cfg := work.Spec.FindManifestConfig(o.Meta)
		if cfg == nil {
			cfg = &workv1.ManifestConfigOption{}
		}
		setFeedback(&mc, o.live, cfg.FeedbackRules, gen)
		if rules != nil && !o.unknownMeta {
			rules.setRuleConditions(&mc, o.live, cfg.ConditionRules, gen)
		}
		manifests = append(manifests, mc)
	}
	work.Status.ResourceStatus.Manifests = manifests
	meta.SetStatusCondition(&work.Status.Conditions, workApplied(manifests, gen))
	meta.SetStatusCondition(&work.Status.Conditions, workAvailable(manifests, gen))
	aggregateRuleConditions(work)
}

// findManifest returns the previous status of the manifest meta, matched by
// its whole identity (ordinal included), or nil.
func findManifest(prev []workv1.ManifestCondition, meta workv1.ManifestResourceMeta) *workv1.ManifestCondition {
	for i := range prev {
		if prev[i].ResourceMeta == meta {
			return &prev[i]
		}
	}
	return nil
}

// manifestApplied is a manifest's Applied condition.
func manifestApplied(o manifestObservation, gen int64) metav1.Condition {
	if o.Err != nil {
		reason := workv1.ManifestAppliedReasonFailed
		switch {
		case apply.IsIgnoreFieldError(o.Err):
			reason = workv1.ManifestAppliedReasonSSAIgnoreFieldError
		case apply.IsTakeOverError(o.Err):
			reason = workv1.ManifestAppliedReasonTakeOverRefused
		}
		return metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, ObservedGeneration: gen,
			Reason: reason, Message: fmt.Sprintf("Failed to apply manifest: %v", o.Err)}
	}
	return metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, ObservedGeneration: gen,
		Reason: workv1.ManifestAppliedReasonComplete, Message: msgManifestApplied}
}

// manifestAvailable is a manifest's Available condition: whether its object
// exists on the managed cluster.
func manifestAvailable(o manifestObservation, gen int64) metav1.Condition {
	c := metav1.Condition{Type: workv1.ManifestAvailable, ObservedGeneration: gen}
	switch {
	case o.unknownMeta:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, workv1.ManifestAvailableReasonIncompleteMeta, msgIncompleteMeta
	case o.fetchErr != nil:
		c.Status, c.Reason = metav1.ConditionUnknown, workv1.ManifestAvailableReasonFetchingFailed
		c.Message = fmt.Sprintf("Failed to get the resource: %v", o.fetchErr)
	case o.exists:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, workv1.ManifestAvailableReasonAvailable, msgResourceAvailable
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.ManifestAvailableReasonNotAvailable, msgResourceMissing
	}
	return c
}

// workApplied aggregates the manifests' Applied conditions: True when all
// are True.
func workApplied(manifests []workv1.ManifestCondition, gen int64) metav1.Condition {
	for _, m := range manifests {
		if !meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestApplied) {
			return metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionFalse, ObservedGeneration: gen,
				Reason: workv1.WorkAppliedReasonFailed, Message: msgManifestWorkFailed}
		}
	}
	return metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: gen,
		Reason: workv1.WorkAppliedReasonComplete, Message: msgManifestWorkApplied}
}

// workAvailable aggregates the manifests' Available conditions: False if
// any is False, else Unknown if any is Unknown or none is True, else True.
func workAvailable(manifests []workv1.ManifestCondition, gen int64) metav1.Condition {
	var available, unavailable, unknown int
	for _, m := range manifests {
		switch c := meta.FindStatusCondition(m.Conditions, workv1.ManifestAvailable); {
		case c == nil || c.Status == metav1.ConditionUnknown:
			unknown++
		case c.Status == metav1.ConditionTrue:
			available++
		default:
			unavailable++
		}
	}
	c := metav1.Condition{Type: workv1.WorkAvailable, ObservedGeneration: gen}
	switch {
	case unavailable > 0:
		c.Status, c.Reason = metav1.ConditionFalse, workv1.WorkAvailableReasonNotAvailable
		c.Message = fmt.Sprintf("%d of %d resources are not available", unavailable, len(manifests))
	case unknown > 0 || available == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, workv1.WorkAvailableReasonStatusUnknown
		c.Message = fmt.Sprintf("%d of %d resources have unknown status", unknown, len(manifests))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, workv1.WorkAvailableReasonAvailable
		c.Message = "All resources are available"
	}
	return c
}
