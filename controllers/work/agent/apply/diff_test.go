package apply

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// secretOf returns Secret shop/db holding data (base64-encoded here) and
// stringData.
func secretOf(data, stringData map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "shop", "resourceVersion": "7"}, "type": "Opaque"}}
	if data != nil {
		m := map[string]any{}
		for k, v := range data {
			m[k] = base64.StdEncoding.EncodeToString([]byte(v))
		}
		obj.Object["data"] = m
	}
	if stringData != nil {
		m := map[string]any{}
		for k, v := range stringData {
			m[k] = v
		}
		obj.Object["stringData"] = m
	}
	return obj
}

// TestDiffOfSecret shows that the diff of a Secret says which values
// change and their sizes, never a value, live or applied.
func TestDiffOfSecret(t *testing.T) {
	values := []string{"hunter22", "hunter23", "admin", "old-token", "new-token-1", "from-string-data"}
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		want, notWant []string
	}{{
		name:    "a changed value of the same size",
		before:  secretOf(map[string]string{"password": "hunter22", "user": "admin"}, nil),
		after:   secretOf(map[string]string{"password": "hunter23", "user": "admin"}, nil),
		want:    []string{"-  password: '(withheld: 8 bytes, value 1)'\n", "+  password: '(withheld: 8 bytes, value 2)'\n", "   user: '(withheld: 5 bytes)'\n"},
		notWant: []string{"-  user", "+  user"},
	}, {
		name:   "a new key and a removed one",
		before: secretOf(map[string]string{"user": "admin", "old": "old-token"}, nil),
		after:  secretOf(map[string]string{"user": "admin", "new": "new-token-1"}, nil),
		want:   []string{"+  new: '(withheld: 11 bytes)'\n", "-  old: '(withheld: 9 bytes)'\n"},
	}, {
		name:   "stringData",
		before: secretOf(map[string]string{"user": "admin"}, nil),
		after:  secretOf(map[string]string{"user": "admin"}, map[string]string{"extra": "from-string-data"}),
		want:   []string{"+stringData:\n", "+  extra: '(withheld: 16 bytes)'\n"},
	}, {
		name:  "a Secret created",
		after: secretOf(map[string]string{"password": "hunter22"}, nil),
		want:  []string{"+  password: '(withheld: 8 bytes)'\n"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var keep [2]string
			for i, obj := range []*unstructured.Unstructured{tc.before, tc.after} {
				if obj != nil {
					b, _ := obj.MarshalJSON()
					keep[i] = string(b)
				}
			}
			d, err := DiffOf("Secret shop/db", tc.before, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Differs {
				t.Fatalf("no difference found:\n%s", d.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Text, w) {
					t.Errorf("the diff lacks %q:\n%s", w, d.Text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(d.Text, w) {
					t.Errorf("the diff holds %q:\n%s", w, d.Text)
				}
			}
			for _, v := range values {
				if strings.Contains(d.Text, v) || strings.Contains(d.Text, base64.StdEncoding.EncodeToString([]byte(v))) {
					t.Errorf("the diff holds the value %q:\n%s", v, d.Text)
				}
			}
			for i, obj := range []*unstructured.Unstructured{tc.before, tc.after} {
				if obj != nil {
					if b, _ := obj.MarshalJSON(); string(b) != keep[i] {
						t.Errorf("DiffOf changed its argument %d: %s", i, b)
					}
				}
			}
		})
	}
}

// TestDiffOfSecretUnchanged shows that a Secret whose values stay is no
// difference, and that a ConfigMap's values are shown.
func TestDiffOfSecretUnchanged(t *testing.T) {
	s := secretOf(map[string]string{"password": "hunter22"}, nil)
	if d, err := DiffOf("Secret shop/db", s, s.DeepCopy()); err != nil || d.Differs {
		t.Errorf("an unchanged Secret: %+v, %v; want no difference", d, err)
	}
	cm := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "web", "namespace": "shop"}, "data": map[string]any{"greeting": v}}}
	}
	d, err := DiffOf("ConfigMap shop/web", cm("hello"), cm("hello again"))
	if err != nil || !strings.Contains(d.Text, "+  greeting: hello again\n") {
		t.Errorf("a ConfigMap's diff: %v\n%s", err, d.Text)
	}
}
