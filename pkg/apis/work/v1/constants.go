package v1

// Condition types of a ManifestWork (status.conditions).
const (
	// WorkApplied is True when every manifest was applied.
	WorkApplied = "Applied"
	// WorkAvailable is True when every applied object exists on the managed cluster.
	WorkAvailable = "Available"
	// WorkProgressing aggregates the Progressing conditions of the condition rules.
	WorkProgressing = "Progressing"
	// WorkDegraded aggregates the Degraded conditions of the condition rules.
	WorkDegraded = "Degraded"
	// WorkComplete is True when every manifest with a Complete condition rule
	// completed; the work is then no longer updated.
	WorkComplete = "Complete"
	// WorkDeleting is True while the agent removes the applied objects of a
	// deleted ManifestWork.
	WorkDeleting = "Deleting"
)

// Condition types of a manifest (status.resourceStatus.manifests[].conditions).
const (
	// ManifestApplied is True when the manifest was applied.
	ManifestApplied = "Applied"
	// ManifestAvailable is True when the applied object exists.
	ManifestAvailable = "Available"
	// ManifestProgressing is set by a Progressing condition rule.
	ManifestProgressing = "Progressing"
	// ManifestDegraded is set by a Degraded condition rule.
	ManifestDegraded = "Degraded"
	// ManifestComplete is set by a Complete condition rule; once True the
	// manifest is no longer updated.
	ManifestComplete = "Complete"
	// ManifestStatusFeedbackSynced reports whether the feedback rules could be evaluated.
	ManifestStatusFeedbackSynced = "StatusFeedbackSynced"
)

// Reasons of the ManifestWork conditions.
const (
	// WorkAppliedReasonComplete is the work-level Applied=True reason.
	WorkAppliedReasonComplete = "AppliedManifestWorkComplete"
	// WorkAppliedReasonFailed is the work-level Applied=False reason.
	WorkAppliedReasonFailed = "AppliedManifestWorkFailed"
	// WorkAvailableReasonAvailable is the work-level Available=True reason.
	WorkAvailableReasonAvailable = "ResourcesAvailable"
	// WorkAvailableReasonNotAvailable is the work-level Available=False reason.
	WorkAvailableReasonNotAvailable = "ResourcesNotAvailable"
	// WorkAvailableReasonStatusUnknown is the work-level Available=Unknown reason.
	WorkAvailableReasonStatusUnknown = "ResourcesStatusUnknown"
	// WorkConditionRulesAggregatedReason is the reason of work-level
	// conditions aggregated from condition rules.
	WorkConditionRulesAggregatedReason = "ConditionRulesAggregated"
	// WorkDeletingReason is the Deleting=True reason.
	WorkDeletingReason = "WorkDeleting"
)

// Reasons of the manifest conditions.
const (
	// ManifestAppliedReasonComplete is the manifest Applied=True reason.
	ManifestAppliedReasonComplete = "AppliedManifestComplete"
	// ManifestAppliedReasonFailed is the manifest Applied=False reason.
	ManifestAppliedReasonFailed = "AppliedManifestFailed"
	// ManifestAppliedReasonSSAIgnoreFieldError is the manifest Applied=False
	// reason when the ignoreFields of server-side apply could not be processed.
	ManifestAppliedReasonSSAIgnoreFieldError = "AppliedManifestSSAIgnoreFieldError"
	// ManifestAvailableReasonAvailable is the manifest Available=True reason.
	ManifestAvailableReasonAvailable = "ResourceAvailable"
	// ManifestAvailableReasonNotAvailable is the manifest Available=False reason.
	ManifestAvailableReasonNotAvailable = "ResourceNotAvailable"
	// ManifestAvailableReasonFetchingFailed is a manifest Available=Unknown reason.
	ManifestAvailableReasonFetchingFailed = "FetchingResourceFailed"
	// ManifestAvailableReasonIncompleteMeta is a manifest Available=Unknown
	// reason: the manifest's identity is incomplete.
	ManifestAvailableReasonIncompleteMeta = "IncompleteResourceMeta"
	// StatusFeedbackSyncedReasonSynced is the StatusFeedbackSynced=True reason.
	StatusFeedbackSyncedReasonSynced = "StatusFeedbackSynced"
	// StatusFeedbackSyncedReasonFailed is a StatusFeedbackSynced=False reason.
	StatusFeedbackSyncedReasonFailed = "StatusFeedbackSyncFailed"
	// StatusFeedbackSyncedReasonNone is a StatusFeedbackSynced=False reason: no
	// value was found.
	StatusFeedbackSyncedReasonNone = "NoStatusFeedbackSynced"
	// ConditionRuleReasonEvaluated is the reason of a condition set by a rule
	// that evaluated cleanly.
	ConditionRuleReasonEvaluated = "ConditionRuleEvaluated"
	// ConditionRuleReasonInvalid is the reason of a condition whose rule is invalid.
	ConditionRuleReasonInvalid = "ConditionRuleInvalid"
	// ConditionRuleReasonExpressionError is the reason of a condition whose
	// CEL expression failed to evaluate.
	ConditionRuleReasonExpressionError = "ConditionRuleExpressionError"
	// ConditionRuleReasonInternalError is the reason of a condition whose rule
	// could not be evaluated for an internal error.
	ConditionRuleReasonInternalError = "ConditionRuleInternalError"
)

// Finalizers and annotations.
const (
	// ManifestWorkFinalizer on a ManifestWork (and on the work RoleBinding in the
	// cluster namespace) lets the agent remove the applied objects first.
	ManifestWorkFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
	// AppliedManifestWorkFinalizer on an AppliedManifestWork lets the agent
	// delete the applied objects first.
	AppliedManifestWorkFinalizer = "cluster.open-cluster-management.io/applied-manifest-work-cleanup"
	// ConfigSpecHashAnnotationKey records, on an object applied with
	// server-side apply and ignoreFields, the hash of the applied spec.
	ConfigSpecHashAnnotationKey = "open-cluster-management.io/config-spec-hash"
	// ObjectSpecHashAnnotationKey records the hash of an applied object's spec.
	ObjectSpecHashAnnotationKey = "open-cluster-management.io/object-hash"
)

// Limits enforced by the hub and the agent.
const (
	// DefaultManifestsSizeLimit is the largest total size, in bytes, of the
	// JSON of the manifests of one ManifestWork (500 KiB), which
	// `kubectl ocm work create` checks. The admission policies in config/hub
	// and the description of spec.workload.manifests cannot import it and
	// spell it out; a test in config keeps them equal.
	DefaultManifestsSizeLimit = 500 * 1024
	// DefaultMaxJSONRawLength is the largest length of a JsonRaw feedback value.
	DefaultMaxJSONRawLength = 1024
)

// Drift: changes made on the managed cluster to an object the agent applied.
const (
	// ManifestDrifted is a manifest condition the agent sets when it finds the
	// object changed (or deleted) on the managed cluster since it applied it:
	// True with reason ResourceModified or ResourceDeleted, and a message
	// naming the object, the fields that drifted, when the agent saw it and
	// whether it restored it (Update and ServerSideApply) or only reports it
	// (CreateOnly and ReadOnly; a deleted CreateOnly object is created again).
	// It records the last drift: it stays set after a restore, and a later
	// drift replaces its message. Manifests that never drifted have none.
	// The agent also records each drift as an Event on the ManifestWork.
	ManifestDrifted = "Drifted"
	// DriftReasonModified is the Drifted reason of an object edited on the
	// managed cluster.
	DriftReasonModified = "ResourceModified"
	// DriftReasonDeleted is the Drifted reason of an object deleted on the
	// managed cluster.
	DriftReasonDeleted = "ResourceDeleted"
)
