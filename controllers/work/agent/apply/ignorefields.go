package apply

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// IgnoreFieldError is the error of an ignoreFields entry the agent cannot
// use; the manifest's Applied condition names it with reason
// AppliedManifestSSAIgnoreFieldError.
type IgnoreFieldError struct {
	// Path is the path as written in the ManifestWork.
	Path string
	// Err says what is wrong with it.
	Err error
}

// Error implements error.
func (e *IgnoreFieldError) Error() string {
	return fmt.Sprintf("serverSideApply.ignoreFields: path %q: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *IgnoreFieldError) Unwrap() error { return e.Err }

// IsIgnoreFieldError says whether err comes from an unusable ignoreFields entry.
func IsIgnoreFieldError(err error) bool {
	var e *IgnoreFieldError
	return errors.As(err, &e)
}

// fieldPath is one field of an object: map keys (string) and list indexes (int).
type fieldPath []any

// ignoredPaths are the parsed ignoreFields of a manifest, by condition.
type ignoredPaths struct {
	onSpokePresent []fieldPath
	onSpokeChange  []fieldPath
}

// parseIgnoreFields parses the jsonPaths and jsonPointers of fields.
func parseIgnoreFields(fields []workv1.IgnoreField) (ignoredPaths, error) {
	var out ignoredPaths
	for _, f := range fields {
		var paths []fieldPath
		for _, p := range f.JSONPaths {
			fp, err := parseJSONPath(p)
			if err != nil {
				return out, &IgnoreFieldError{Path: p, Err: err}
			}
			paths = append(paths, fp)
		}
		for _, p := range f.JSONPointers {
			fp, err := parseJSONPointer(p)
			if err != nil {
				return out, &IgnoreFieldError{Path: p, Err: err}
			}
			paths = append(paths, fp)
		}
		if len(f.JQPathExpressions) > 0 {
			return out, &IgnoreFieldError{Path: f.JQPathExpressions[0], Err: errors.New("jqPathExpressions are not supported; use jsonPaths or jsonPointers")}
		}
		if f.Condition == workv1.IgnoreFieldsConditionOnSpokeChange {
			out.onSpokeChange = append(out.onSpokeChange, paths...)
		} else {
			out.onSpokePresent = append(out.onSpokePresent, paths...)
		}
	}
	return out, nil
}

// parseJSONPath parses a simple JSONPath: dot-separated keys with list
// indexes and quoted keys in brackets, such as .spec.replicas,
// {.spec.containers[0].image} or .metadata.labels['app.kubernetes.io/name'].
func parseJSONPath(p string) (fieldPath, error) {
	s := strings.TrimSpace(p)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	s = strings.TrimPrefix(s, "$")
	var out fieldPath
	for s != "" {
		switch {
		case s[0] == '.':
			s = s[1:]
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			if end == 0 {
				return nil, errors.New("empty key")
			}
			out = append(out, s[:end])
			s = s[end:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			in := s[1:end]
			s = s[end+1:]
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				out = append(out, in[1:len(in)-1])
				continue
			}
			i, err := strconv.Atoi(in)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("[%s] is neither a list index nor a quoted key", in)
			}
			out = append(out, i)
		case len(out) == 0:
			s = "." + s // spec.replicas
		default:
			return nil, fmt.Errorf("unexpected %q", s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("empty path")
	}
	return out, nil
}

// parseJSONPointer parses an RFC 6901 JSON pointer such as /spec/replicas.
// Segments that are numbers index lists.
func parseJSONPointer(p string) (fieldPath, error) {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return nil, errors.New("a JSON pointer starts with / and names a field")
	}
	var out fieldPath
	for _, seg := range strings.Split(p[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 {
			out = append(out, i)
			continue
		}
		out = append(out, seg)
	}
	return out, nil
}

// get returns the value at p in obj.
func (p fieldPath) get(obj any) (any, bool) {
	cur := obj
	for _, seg := range p {
		switch k := seg.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		}
	}
	return cur, true
}

// set sets the value at p in obj when its parent exists, or removes it when
// present is false.
func (p fieldPath) set(obj any, value any, present bool) {
	parent, ok := p[:len(p)-1].get(obj)
	if !ok {
		return
	}
	switch k := p[len(p)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			return
		}
		if present {
			m[k] = value
		} else {
			delete(m, k)
		}
	case int:
		l, ok := parent.([]any)
		if !ok || k >= len(l) {
			return
		}
		if present {
			l[k] = value
		} // an item is not removed: the indexes after it would shift
	}
}

// keepIgnoredFields makes required carry the live values of existing at
// the ignored fields, so that applying it neither takes them over nor undoes
// changes made to them on the managed cluster:
//   - OnSpokePresent fields keep their live value once the object exists,
//     whatever the manifest says;
//   - OnSpokeChange fields keep their live value until the manifest changes.
//
// The annotation config-spec-hash records the hash of the manifest without
// its OnSpokePresent fields at the last apply; keepIgnoredFields returns the
// hash of required and whether it equals the recorded one (the manifest has
// not changed since). A field missing on the live object is left out of
// required.
func keepIgnoredFields(required, existing *unstructured.Unstructured, fields []workv1.IgnoreField) (hash string, unchanged bool, err error) {
	paths, err := parseIgnoreFields(fields)
	if err != nil {
		return "", false, err
	}
	stripped := required.DeepCopy()
	for _, p := range paths.onSpokePresent {
		p.set(stripped.Object, nil, false)
	}
	hash = contentHash(stripped)
	if existing == nil {
		return hash, false, nil
	}
	keep := paths.onSpokePresent
	unchanged = existing.GetAnnotations()[workv1.ConfigSpecHashAnnotationKey] == hash
	if unchanged {
		keep = append(keep, paths.onSpokeChange...)
	}
	for _, p := range keep {
		v, ok := p.get(existing.Object)
		p.set(required.Object, v, ok)
	}
	return hash, unchanged, nil
}
