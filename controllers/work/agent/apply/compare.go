package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// contentHash returns the hex SHA-256 of the manifest's content as applied
// (everything but metadata and status, plus its labels and annotations).
// Update records it on the object in annotation
// open-cluster-management.io/object-hash.
func contentHash(required *unstructured.Unstructured) string {
	content := map[string]any{}
	for k, v := range required.Object {
		if k != "metadata" && k != "status" {
			content[k] = v
		}
	}
	content["labels"] = required.GetLabels()
	annotations := required.GetAnnotations()
	delete(annotations, hashAnnotation)
	content["annotations"] = annotations
	data, _ := json.Marshal(content) // maps of JSON values always encode
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// sameContent reports whether existing already holds everything required
// sets outside metadata and status: every map key of required has an equal
// value in existing (existing may hold more, such as defaulted fields), and
// lists have the same length with matching elements.
func sameContent(required, existing *unstructured.Unstructured) bool {
	for k, v := range required.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		if !isSubset(v, existing.Object[k]) {
			return false
		}
	}
	return true
}

// isSubset reports whether want is contained in got (see sameContent).
func isSubset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		for k, v := range w {
			if !isSubset(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		if len(w) != len(g) {
			return false
		}
		for i := range w {
			if !isSubset(w[i], g[i]) {
				return false
			}
		}
		return true
	case nil:
		return got == nil
	default:
		return reflect.DeepEqual(normalizeNumber(want), normalizeNumber(got))
	}
}

// normalizeNumber makes JSON numbers decoded as int64 and float64 comparable.
func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case int32:
		return float64(n)
	default:
		return v
	}
}

// mergeMap returns existing with every entry of required set, and whether
// that changed anything.
func mergeMap(existing, required map[string]string) (map[string]string, bool) {
	changed := false
	out := maps.Clone(existing)
	if out == nil && len(required) > 0 {
		out = map[string]string{}
	}
	for k, v := range required {
		if cur, ok := out[k]; !ok || cur != v {
			out[k] = v
			changed = true
		}
	}
	return out, changed
}
