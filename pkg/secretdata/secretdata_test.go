package secretdata

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func secret(data, stringData map[string]string, lastApplied string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "shop"}}}
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
	if lastApplied != "" {
		obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied, "team": "shop"})
	}
	return obj
}

func value(obj *unstructured.Unstructured, field, key string) string {
	v, _, _ := unstructured.NestedString(obj.Object, field, key)
	return v
}

func TestWithhold(t *testing.T) {
	before := secret(map[string]string{"password": "hunter22", "user": "admin", "old": "gone"}, nil, `{"data":{"password":"aHVudGVyMjI="}}`)
	after := secret(map[string]string{"password": "hunter23", "user": "admin", "token": "abcdef"}, map[string]string{"extra": "hi"}, `{"data":{"password":"aHVudGVyMjM="}}`)
	Withhold("", before, after)
	for _, tc := range []struct {
		what, got, want string
	}{
		{"a changed value, live", value(before, "data", "password"), "(withheld: 8 bytes, value 1)"},
		{"a changed value, applied", value(after, "data", "password"), "(withheld: 8 bytes, value 2)"},
		{"an unchanged value, live", value(before, "data", "user"), "(withheld: 5 bytes)"},
		{"an unchanged value, applied", value(after, "data", "user"), "(withheld: 5 bytes)"},
		{"a removed key", value(before, "data", "old"), "(withheld: 4 bytes)"},
		{"a new key", value(after, "data", "token"), "(withheld: 6 bytes)"},
		{"stringData", value(after, "stringData", "extra"), "(withheld: 2 bytes)"},
		{"the last-applied annotation, live", before.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], "(withheld: 36 bytes, value 1)"},
		{"the last-applied annotation, applied", after.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], "(withheld: 36 bytes, value 2)"},
		{"another annotation", after.GetAnnotations()["team"], "shop"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, tc.got, tc.want)
		}
	}
	if _, found, _ := unstructured.NestedMap(after.Object, "stringData"); !found {
		t.Error("stringData gone, want it withheld")
	}
}

// TestWithholdSameSize shows that two values of one size are told apart,
// and that a value found again on a third object gets its first number.
func TestWithholdSameSize(t *testing.T) {
	a, b, c := secret(map[string]string{"k": "aaaa"}, nil, ""), secret(map[string]string{"k": "bbbb"}, nil, ""), secret(map[string]string{"k": "aaaa"}, nil, "")
	Withhold("ask for them", a, nil, b, c)
	if got := []string{value(a, "data", "k"), value(b, "data", "k"), value(c, "data", "k")}; got[0] == got[1] || got[0] != got[2] ||
		got[1] != "(withheld: 4 bytes, value 2; ask for them)" {
		t.Errorf("got %q, want values 1, 2, 1 with the hint", got)
	}
}

// TestWithholdNothingLeft checks that no value survives anywhere in the
// objects, and that objects that are no Secret are left alone.
func TestWithholdNothingLeft(t *testing.T) {
	const pw = "correct horse battery staple"
	s := secret(map[string]string{"password": pw}, map[string]string{"password": pw}, `{"stringData":{"password":"`+pw+`"}}`)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"password": pw}}}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Secret", "data": map[string]any{"password": pw}}}
	Withhold("", s, cm, other)
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if enc := base64.StdEncoding.EncodeToString([]byte(pw)); strings.Contains(string(b), pw) || strings.Contains(string(b), enc) {
		t.Errorf("the Secret still holds its value: %s", b)
	}
	if value(cm, "data", "password") != pw || value(other, "data", "password") != pw {
		t.Error("a ConfigMap or another group's Secret was changed")
	}
}
