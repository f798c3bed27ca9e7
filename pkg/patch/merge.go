package patch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/runtime"
)

// serverFields are the fields the API server changes on every write; a
// change to them says nothing about what another writer decided.
var serverFields = []string{"metadata.resourceVersion", "metadata.generation", "metadata.managedFields"}

// overlapError reports the fields or list items another writer changed that
// the baseline or this reconcile holds.
type overlapError struct {
	fields []string
}

func (e *overlapError) Error() string {
	return "another writer changed " + strings.Join(e.fields, ", ") +
		" since the object was read; the object is reconciled again on fresh data"
}

// rebase returns part p as it should be written when the API server holds
// theirs. When that part has not changed since base (the baseline), it is
// ours (the reconciled object). When the other writer only added what
// neither base nor ours holds (a condition of another type, a finalizer, a
// label, any field both lack), it is ours with those additions. Otherwise it
// returns an *overlapError: re-applying a change computed from an older read
// could undo a newer decision.
func rebase(p part, base, ours, theirs map[string]any) (map[string]any, error) {
	b, o, t := p.of(base), p.of(ours), p.of(theirs)
	if reflect.DeepEqual(b, t) {
		return o, nil
	}
	b, bl := cut(b, p.list)
	o, ol := cut(o, p.list)
	t, tl := cut(t, p.list)
	theirChange, err := diff(b, t)
	if err != nil {
		return nil, err
	}
	fields := held(theirChange, b, o, "")
	added, items := addedItems(bl, ol, tl, p.key)
	for _, k := range items {
		fields = append(fields, fmt.Sprintf("%s[%s]", strings.Join(p.list, "."), k))
	}
	if len(fields) > 0 {
		return nil, &overlapError{fields: fields}
	}
	merged, err := apply(o, theirChange)
	if err != nil {
		return nil, err
	}
	if list := append(ol, added...); len(list) > 0 {
		if err := setPath(merged, p.list, list); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// held returns the paths of the merge patch theirs that base or ours holds
// with another value, except serverFields.
func held(theirs, base, ours map[string]any, prefix string) []string {
	var out []string
	for k, tv := range theirs {
		path := prefix + k
		bv, inBase := base[k]
		ov, inOurs := ours[k]
		tm, tMap := tv.(map[string]any)
		bm, bMap := bv.(map[string]any)
		om, oMap := ov.(map[string]any)
		switch {
		case slices.Contains(serverFields, path):
		case tMap && (bMap || !inBase) && (oMap || !inOurs):
			out = append(out, held(tm, bm, om, path+".")...)
		case (inBase || inOurs) && !reflect.DeepEqual(tv, ov):
			out = append(out, path)
		}
	}
	return out
}

// addedItems returns the items of the list theirs whose key neither base
// nor ours holds, in their order, and the keys of the other items theirs
// changed, added or removed to a value ours does not have. Items without a
// key count as changed when theirs differ from base's.
func addedItems(base, ours, theirs []any, key func(any) (string, bool)) (added []any, changed []string) {
	b, o, t := byKey(base, key), byKey(ours, key), byKey(theirs, key)
	for _, item := range theirs {
		k, ok := key(item)
		if !ok {
			continue
		}
		_, inBase := b[k]
		_, inOurs := o[k]
		switch {
		case !inBase && !inOurs:
			added = append(added, item)
		case !reflect.DeepEqual(item, b[k]) && !reflect.DeepEqual(item, o[k]):
			changed = append(changed, k)
		}
	}
	for _, item := range base {
		k, ok := key(item)
		if !ok {
			continue
		}
		_, kept := t[k]
		if _, inOurs := o[k]; !kept && inOurs {
			changed = append(changed, k)
		}
	}
	if !reflect.DeepEqual(unkeyed(base, key), unkeyed(theirs, key)) {
		changed = append(changed, "(an item without a key)")
	}
	return added, changed
}

// byKey indexes the items of a list by key.
func byKey(items []any, key func(any) (string, bool)) map[string]any {
	out := make(map[string]any, len(items))
	for _, item := range items {
		if k, ok := key(item); ok {
			out[k] = item
		}
	}
	return out
}

// unkeyed returns the items of a list that have no key.
func unkeyed(items []any, key func(any) (string, bool)) []any {
	var out []any
	for _, item := range items {
		if _, ok := key(item); !ok {
			out = append(out, item)
		}
	}
	return out
}

// mergePatch returns the JSON merge patch from current to desired with
// rv as the resourceVersion precondition, or nil when they are equal.
func mergePatch(current, desired map[string]any, rv string) ([]byte, error) {
	p, err := diff(current, desired)
	if err != nil || len(p) == 0 {
		return nil, err
	}
	md, _ := p["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		p["metadata"] = md
	}
	md["resourceVersion"] = rv
	return json.Marshal(p)
}

// diff returns the JSON merge patch from a to b.
func diff(a, b map[string]any) (map[string]any, error) {
	return onJSON(jsonpatch.CreateMergePatch, a, b)
}

// apply returns doc with the JSON merge patch p applied.
func apply(doc, p map[string]any) (map[string]any, error) {
	return onJSON(jsonpatch.MergePatch, doc, p)
}

// onJSON runs op, a function of two JSON documents, on a and b.
func onJSON(op func(a, b []byte) ([]byte, error), a, b map[string]any) (map[string]any, error) {
	aj, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode a document: %w", err)
	}
	bj, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode a document: %w", err)
	}
	out, err := op(aj, bj)
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	doc := map[string]any{}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("decode a merge patch result: %w", err)
	}
	return doc, nil
}

// cut returns a copy of doc without the list at path, and that list.
func cut(doc map[string]any, path []string) (map[string]any, []any) {
	doc = runtime.DeepCopyJSON(doc)
	parent := doc
	for _, k := range path[:len(path)-1] {
		next, ok := parent[k].(map[string]any)
		if !ok {
			return doc, nil
		}
		parent = next
	}
	last := path[len(path)-1]
	list, _ := parent[last].([]any)
	delete(parent, last)
	return doc, list
}

// setPath sets the list at path in doc, creating the maps on the way.
func setPath(doc map[string]any, path []string, list []any) error {
	parent := doc
	for _, k := range path[:len(path)-1] {
		if parent[k] == nil {
			parent[k] = map[string]any{}
		}
		next, ok := parent[k].(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", k)
		}
		parent = next
	}
	parent[path[len(path)-1]] = list
	return nil
}
