package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestChangeOf(t *testing.T) {
	obj := func(uid, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetUID(types.UID(uid))
		u.SetResourceVersion(rv)
		return u
	}
	tests := []struct {
		name          string
		before, after *unstructured.Unstructured
		want          Change
	}{
		{name: "not written", before: obj("a", "1"), want: ChangeNone},
		{name: "created", after: obj("a", "1"), want: ChangeCreated},
		{name: "unchanged", before: obj("a", "1"), after: obj("a", "1"), want: ChangeNone},
		{name: "updated", before: obj("a", "1"), after: obj("a", "2"), want: ChangeUpdated},
		{name: "deleted after the read, created again by the write", before: obj("a", "1"), after: obj("b", "2"), want: ChangeCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changeOf(tt.before, tt.after); got != tt.want {
				t.Errorf("changeOf = %q, want %q", got, tt.want)
			}
		})
	}
}
