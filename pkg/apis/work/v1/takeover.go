package v1

import (
	"fmt"
	"slices"
)

// TakeOverAnnotation on a ManifestWork says whether its agent may take over
// an object that exists on the managed cluster and that the work did not
// create (its AppliedManifestWork does not hold it): adopt it as its own,
// write the manifest over it and, with the default delete option, delete it
// with the work. A ManifestWorkReplicaSet's annotation is copied to every
// ManifestWork it creates. OCM's ManifestWork has no such field: OCM always
// takes over, which is the default here too.
const TakeOverAnnotation = "work.kubectl-ocm.io/take-over"

// TakeOverRule is a value of TakeOverAnnotation.
type TakeOverRule string

const (
	// TakeOverAlways takes over every object the work's manifests name, as
	// OCM does. The default.
	TakeOverAlways TakeOverRule = "Always"
	// TakeOverIfNoDiff takes over an object only when it already holds what
	// the manifest sets (ignoring fields the manifest does not set), so that
	// taking it over changes nothing; otherwise the manifest fails with the
	// differing fields, and is tried again.
	TakeOverIfNoDiff TakeOverRule = "IfNoDiff"
	// TakeOverNever leaves every object the work did not create alone: the
	// manifest fails, and is tried again.
	TakeOverNever TakeOverRule = "Never"
)

// TakeOverRules are the values TakeOverAnnotation accepts.
var TakeOverRules = []TakeOverRule{TakeOverAlways, TakeOverIfNoDiff, TakeOverNever}

// ManifestAppliedReasonTakeOverRefused is the manifest Applied=False reason
// when the work's take-over rule (TakeOverAnnotation) refuses an object that
// exists and that the work did not create.
const ManifestAppliedReasonTakeOverRefused = "TakeOverRefused"

// TakeOverRuleOf returns the take-over rule of annotations: TakeOverAlways
// without TakeOverAnnotation, an error naming the accepted values when its
// value is none of them.
func TakeOverRuleOf(annotations map[string]string) (TakeOverRule, error) {
	v, ok := annotations[TakeOverAnnotation]
	if !ok {
		return TakeOverAlways, nil
	}
	if r := TakeOverRule(v); slices.Contains(TakeOverRules, r) {
		return r, nil
	}
	return "", fmt.Errorf("annotation %s=%q: must be one of %v", TakeOverAnnotation, v, TakeOverRules)
}
