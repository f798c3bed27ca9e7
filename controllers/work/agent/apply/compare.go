package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"slices"

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

// holds reports whether existing already holds required: its content, its
// labels and annotations, and its owner references.
func holds(existing, required *unstructured.Unstructured) bool {
	_, labelsChanged := mergeMap(existing.GetLabels(), required.GetLabels())
	_, annotationsChanged := mergeMap(existing.GetAnnotations(), required.GetAnnotations())
	_, refsChanged := mergeOwners(existing.GetOwnerReferences(), required.GetOwnerReferences())
	return !labelsChanged && !annotationsChanged && !refsChanged && sameContent(required, existing)
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

// Differences returns the paths (such as data.a or metadata.labels.app) at
// which the live object no longer holds what the manifest sets: content
// outside metadata and status, labels and annotations. Extra fields on the
// live object (defaults, fields of other managers) are not differences. It
// is empty when live matches the manifest, the check drift detection uses.
func Differences(manifest, live *unstructured.Unstructured) []string {
	var out []string
	for k, v := range manifest.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		out = appendDiffs(out, k, v, live.Object[k])
	}
	for k, v := range manifest.GetLabels() {
		if cur, ok := live.GetLabels()[k]; !ok || cur != v {
			out = append(out, "metadata.labels."+k)
		}
	}
	for k, v := range manifest.GetAnnotations() {
		if cur, ok := live.GetAnnotations()[k]; !ok || cur != v {
			out = append(out, "metadata.annotations."+k)
		}
	}
	slices.Sort(out)
	return out
}

// appendDiffs appends the paths under path where got does not hold want.
func appendDiffs(out []string, path string, want, got any) []string {
	w, ok := want.(map[string]any)
	if !ok {
		if !isSubset(want, got) {
			out = append(out, path)
		}
		return out
	}
	g, ok := got.(map[string]any)
	if !ok {
		if !isSubset(want, got) {
			out = append(out, path)
		}
		return out
	}
	for k, v := range w {
		out = appendDiffs(out, path+"."+k, v, g[k])
	}
	return out
}

// Fingerprint returns a hash of what an object holds outside metadata and
// status, plus its labels and annotations: it changes when someone edits the
// object, and not when only its status changes.
func Fingerprint(obj *unstructured.Unstructured) string { return contentHash(obj) }
