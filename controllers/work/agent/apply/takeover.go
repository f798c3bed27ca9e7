package apply

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// TakeOverError is why a work's take-over rule refused an object that
// exists and that the work did not create.
type TakeOverError struct {
	// Rule is the work's rule: IfNoDiff or Never.
	Rule workv1.TakeOverRule
	// Differences are the paths at which the object differs from the
	// manifest (IfNoDiff).
	Differences []string
	// Invalid is why the work's annotation holds no rule.
	Invalid error
}

func (e *TakeOverError) Error() string {
	if e.Invalid != nil {
		return fmt.Sprintf("the object exists and this work did not create it; it is left alone until the work's take-over rule is valid: %v", e.Invalid)
	}
	msg := "the object exists and this work did not create it; take-over rule " + string(e.Rule) + " (annotation " + workv1.TakeOverAnnotation + ")"
	if e.Rule == workv1.TakeOverNever {
		return msg + " leaves it alone"
	}
	return fmt.Sprintf("%s takes it over only when it holds what the manifest sets, and it differs at %s", msg, strings.Join(e.Differences, ", "))
}

// IsTakeOverError reports whether err is a take-over refusal.
func IsTakeOverError(err error) bool {
	var te *TakeOverError
	return errors.As(err, &te)
}

// takeOver applies d's take-over rule to existing, the live object of a
// manifest the work has not applied before: it returns a TakeOverError when
// the rule refuses it. An object the work already owns (a record lost
// between the write and the AppliedManifestWork's update), a missing one,
// and a read-only manifest, which takes nothing over, pass.
func takeOver(d Decision, existing, required *unstructured.Unstructured, owner metav1.OwnerReference) error {
	if !d.New || existing == nil || d.StrategyType() == workv1.UpdateStrategyTypeReadOnly || IsOwnedBy(existing.GetOwnerReferences(), owner.UID) {
		return nil
	}
	switch {
	case d.TakeOverInvalid != nil:
		return &TakeOverError{Rule: workv1.TakeOverNever, Invalid: d.TakeOverInvalid}
	case d.TakeOver == workv1.TakeOverNever:
		return &TakeOverError{Rule: workv1.TakeOverNever}
	case d.TakeOver == workv1.TakeOverIfNoDiff:
		if diffs := Differences(required, existing); len(diffs) > 0 {
			return &TakeOverError{Rule: workv1.TakeOverIfNoDiff, Differences: diffs}
		}
	}
	return nil
}
