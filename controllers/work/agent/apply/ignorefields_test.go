package apply

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestParseIgnorePaths(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		pointer bool
		want    fieldPath
		wantErr bool
	}{
		{name: "dotted", path: ".spec.replicas", want: fieldPath{"spec", "replicas"}},
		{name: "without leading dot", path: "spec.replicas", want: fieldPath{"spec", "replicas"}},
		{name: "braces and root", path: "{$.spec.replicas}", want: fieldPath{"spec", "replicas"}},
		{name: "list index", path: ".spec.containers[0].image", want: fieldPath{"spec", "containers", 0, "image"}},
		{name: "quoted key", path: ".metadata.labels['app.kubernetes.io/name']", want: fieldPath{"metadata", "labels", "app.kubernetes.io/name"}},
		{name: "empty", path: "", wantErr: true},
		{name: "empty key", path: ".spec..replicas", wantErr: true},
		{name: "unclosed bracket", path: ".spec.containers[0", wantErr: true},
		{name: "filter", path: ".spec.containers[?(@.name=='a')]", wantErr: true},
		{name: "pointer", path: "/spec/replicas", pointer: true, want: fieldPath{"spec", "replicas"}},
		{name: "pointer escapes and index", path: "/metadata/annotations/a~1b~0c/1", pointer: true, want: fieldPath{"metadata", "annotations", "a/b~c", 1}},
		{name: "pointer without slash", path: "spec", pointer: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parse := parseJSONPath
			if tt.pointer {
				parse = parseJSONPointer
			}
			got, err := parse(tt.path)
			if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("parse(%q) = %v, %v; want %v, error %v", tt.path, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestKeepIgnoredFields(t *testing.T) {
	cm := func(a, b string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x"}, "data": map[string]any{"b": b}}}
		if a != "" {
			u.Object["data"].(map[string]any)["a"] = a
		}
		return u
	}
	ignore := func(c workv1.IgnoreFieldsCondition) []workv1.IgnoreField {
		return []workv1.IgnoreField{{Condition: c, JSONPaths: []string{".data.a"}}}
	}
	// hashOf is the annotation an apply of manifest with fields records.
	hashOf := func(manifest *unstructured.Unstructured, fields []workv1.IgnoreField) string {
		h, _, err := keepIgnoredFields(manifest.DeepCopy(), nil, fields)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	live := func(a, b, hash string) *unstructured.Unstructured {
		u := cm(a, b)
		u.SetAnnotations(map[string]string{workv1.ConfigSpecHashAnnotationKey: hash})
		return u
	}
	present, change := ignore(workv1.IgnoreFieldsConditionOnSpokePresent), ignore(workv1.IgnoreFieldsConditionOnSpokeChange)
	tests := []struct {
		name          string
		required      *unstructured.Unstructured
		existing      *unstructured.Unstructured
		fields        []workv1.IgnoreField
		wantA         any
		wantUnchanged bool
	}{
		{name: "created with the manifest's value", required: cm("1", "1"), fields: present, wantA: "1"},
		{name: "OnSpokePresent keeps a spoke change", required: cm("1", "1"), existing: live("2", "1", hashOf(cm("1", "1"), present)),
			fields: present, wantA: "2", wantUnchanged: true},
		{name: "OnSpokePresent keeps the live value when the manifest changes it", required: cm("3", "1"),
			existing: live("2", "1", hashOf(cm("1", "1"), present)), fields: present, wantA: "2", wantUnchanged: true},
		{name: "OnSpokePresent leaves out a field the live object lacks", required: cm("1", "1"),
			existing: live("", "1", hashOf(cm("1", "1"), present)), fields: present, wantA: nil, wantUnchanged: true},
		{name: "OnSpokeChange keeps a spoke change", required: cm("1", "1"), existing: live("2", "1", hashOf(cm("1", "1"), change)),
			fields: change, wantA: "2", wantUnchanged: true},
		{name: "OnSpokeChange applies a manifest change", required: cm("3", "1"), existing: live("2", "1", hashOf(cm("1", "1"), change)),
			fields: change, wantA: "3"},
		{name: "another field changed in the manifest", required: cm("1", "9"), existing: live("2", "1", hashOf(cm("1", "1"), present)),
			fields: present, wantA: "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, unchanged, err := keepIgnoredFields(tt.required, tt.existing, tt.fields)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := fieldPath{"data", "a"}.get(tt.required.Object)
			if a != tt.wantA || unchanged != tt.wantUnchanged {
				t.Errorf("data.a = %v, unchanged = %v; want %v, %v", a, unchanged, tt.wantA, tt.wantUnchanged)
			}
		})
	}
	t.Run("jqPathExpressions are refused", func(t *testing.T) {
		_, _, err := keepIgnoredFields(cm("1", "1"), nil, []workv1.IgnoreField{{JQPathExpressions: []string{".data.a"}}})
		if !IsIgnoreFieldError(err) {
			t.Errorf("err = %v, want an IgnoreFieldError", err)
		}
	})
}
