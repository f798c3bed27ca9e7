package apply

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Contains reports whether live already holds everything desired sets, so
// that applying desired would change nothing: every key of a map in desired
// is in live's map with a value that contains desired's, a list has as many
// items as desired's, each containing desired's item at the same index, and
// any other value is equal. Fields only live has (those the API server or
// other writers set) do not matter. A false answer only costs an apply.
func Contains(live, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			lv, ok := l[k]
			if !ok || !Contains(lv, dv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !Contains(l[i], d[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(live, desired)
	}
}

// UpToDate reports whether the object named by desired, as reader (a
// controller's cache, typically) holds it, already contains every field of
// desired that an apply sends (see Contains): its metadata, spec and other
// content, but not its kind, which a cache may leave out, status or
// creation time. desired must be typed, so that the reader's copy converts
// with the same zero-valued fields. Any error, NotFound included, reports
// false.
func UpToDate(ctx context.Context, reader client.Reader, desired client.Object) bool {
	live, ok := desired.DeepCopyObject().(client.Object)
	if !ok || reader.Get(ctx, client.ObjectKeyFromObject(desired), live) != nil {
		return false
	}
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false
	}
	d, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return false
	}
	for _, field := range [][]string{{"apiVersion"}, {"kind"}, {"status"}, {"metadata", "creationTimestamp"}} {
		unstructured.RemoveNestedField(d, field...)
	}
	return Contains(l, d)
}
