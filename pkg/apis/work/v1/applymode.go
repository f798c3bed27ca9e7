package v1

import (
	"fmt"
	"slices"
)

// ApplyModeAnnotation on a ManifestWork says whether its agent applies the
// manifests (Apply, the default, as OCM) or only reports what applying them
// would change on the managed cluster (ReportDiff): each manifest is applied
// with its update strategy as a server-side dry run against the live object,
// and the difference is reported in the manifest's Diff condition; nothing
// on the cluster changes and the work records no applied object. OCM's
// ManifestWork has no such field.
const ApplyModeAnnotation = "work.kubectl-ocm.io/apply-mode"

// ApplyMode is a value of ApplyModeAnnotation.
type ApplyMode string

const (
	// ApplyModeApply applies the manifests. The default.
	ApplyModeApply ApplyMode = "Apply"
	// ApplyModeReportDiff reports what applying them would change.
	ApplyModeReportDiff ApplyMode = "ReportDiff"
)

// ApplyModes are the values ApplyModeAnnotation accepts.
var ApplyModes = []ApplyMode{ApplyModeApply, ApplyModeReportDiff}

// Conditions and reasons of a ReportDiff work.
const (
	// WorkDiffReported is True when the agent compared every manifest with
	// its live object at the work's generation.
	WorkDiffReported = "DiffReported"
	// ManifestDiff is True when applying the manifest would change the
	// cluster; its message is the change, as a unified diff of the object's
	// YAML (live, then as it would be), cut at DiffMessageLimit bytes.
	ManifestDiff = "Diff"

	// DiffReasonNoDiff: applying the manifest changes nothing.
	DiffReasonNoDiff = "NoDiff"
	// DiffReasonDiffers: applying it would change the object.
	DiffReasonDiffers = "Differs"
	// DiffReasonWouldCreate: the object does not exist; applying it would
	// create it.
	DiffReasonWouldCreate = "WouldCreate"
	// DiffReasonFailed: the dry run failed (Diff Unknown), with the error.
	DiffReasonFailed = "DiffFailed"
	// DiffReasonInvalidApplyMode: the work's ApplyModeAnnotation holds no
	// mode: nothing is applied nor compared until it does.
	DiffReasonInvalidApplyMode = "InvalidApplyMode"
)

// DiffMessageLimit is the longest diff a Diff condition carries (a
// condition message holds 32768 bytes at most).
const DiffMessageLimit = 30000

// ApplyModeOf returns the apply mode of annotations: ApplyModeApply
// without ApplyModeAnnotation, an error naming the accepted values when its
// value is none of them.
func ApplyModeOf(annotations map[string]string) (ApplyMode, error) {
	v, ok := annotations[ApplyModeAnnotation]
	if !ok {
		return ApplyModeApply, nil
	}
	if m := ApplyMode(v); slices.Contains(ApplyModes, m) {
		return m, nil
	}
	return "", fmt.Errorf("annotation %s=%q: must be one of %v", ApplyModeAnnotation, v, ApplyModes)
}
