package apply

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stretchr/testify/require"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestTakeOver(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "work.open-cluster-management.io/v1", Kind: "AppliedManifestWork", Name: "w", UID: types.UID("amw")}
	cm := func(value string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": map[string]any{"a": value}}}
		u.SetOwnerReferences(owners)
		return u
	}
	required := cm("1")
	readOnly := &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly}
	for _, tc := range []struct {
		name     string
		d        Decision
		existing *unstructured.Unstructured
		want     string // "" passes
	}{
		{"Always takes over", Decision{New: true, TakeOver: workv1.TakeOverAlways}, cm("theirs"), ""},
		{"no rule is Always", Decision{New: true}, cm("theirs"), ""},
		{"Never refuses", Decision{New: true, TakeOver: workv1.TakeOverNever}, cm("1"), "take-over rule Never"},
		{"IfNoDiff refuses a difference", Decision{New: true, TakeOver: workv1.TakeOverIfNoDiff}, cm("theirs"), "differs at data.a"},
		{"IfNoDiff takes over a match", Decision{New: true, TakeOver: workv1.TakeOverIfNoDiff}, cm("1"), ""},
		{"a missing object is created", Decision{New: true, TakeOver: workv1.TakeOverNever}, nil, ""},
		{"an object applied before is the work's", Decision{New: false, TakeOver: workv1.TakeOverNever}, cm("theirs"), ""},
		{"an object the work owns is the work's", Decision{New: true, TakeOver: workv1.TakeOverNever}, cm("theirs", owner), ""},
		{"read-only takes nothing over", Decision{New: true, TakeOver: workv1.TakeOverNever, Strategy: readOnly}, cm("theirs"), ""},
		{"an invalid rule refuses", Decision{New: true, TakeOverInvalid: errors.New("bad value")}, cm("1"), "until the work's take-over rule is valid: bad value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := takeOver(tc.d, tc.existing, required, owner)
			if tc.want == "" {
				require.NoError(t, err, "takeOver")
				return
			}
			require.ErrorContains(t, err, tc.want, "takeOver")
			require.True(t, IsTakeOverError(err), "takeOver = %v, want a TakeOverError", err)
		})
	}
}
