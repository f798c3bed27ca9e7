package pullsecret

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{name: "docker login", data: `{"auths":{"registry.example:5000":{"auth":"dTpw"}},"credsStore":""}`},
		{name: "not JSON", data: `auths: {}`, wantErr: "are not a docker config.json"},
		{name: "no auths", data: `{"credsStore":"desktop"}`, wantErr: `have no registry under "auths"`},
		{name: "empty auths", data: `{"auths":{}}`, wantErr: `have no registry under "auths"`},
		{name: "empty file", data: ``, wantErr: "are not a docker config.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate("creds.json", []byte(tt.data))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
			assert.ErrorContains(t, err, "creds.json", "the error names the file")
		})
	}
}

func deployment(ns, name string, refs ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	var list []any
	for _, r := range refs {
		list = append(list, map[string]any{"name": r})
	}
	if list != nil {
		_ = unstructured.SetNestedSlice(u.Object, list, "spec", "template", "spec", "imagePullSecrets")
	}
	return u
}

func refs(t *testing.T, dep *unstructured.Unstructured) []string {
	t.Helper()
	list, _, err := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "imagePullSecrets")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list {
		out = append(out, r.(map[string]any)["name"].(string))
	}
	return out
}

// TestWire checks that every Deployment references the Secret once, that a
// copy lands in each of their namespaces but the source's, and that no
// source changes nothing.
func TestWire(t *testing.T) {
	source := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management", Name: Name},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"r":{}}}`)}}
	objs := []*unstructured.Unstructured{
		deployment("hub", "a"), deployment("hub", "b", "mine", Name), deployment("other", "c", "mine"),
		deployment("open-cluster-management", "operator"),
	}
	none, err := Wire(objs, nil)
	if err != nil || len(none) != len(objs) || refs(t, none[0]) != nil {
		t.Fatalf("Wire without a source: %v, %d objects, refs %v", err, len(none), refs(t, none[0]))
	}
	got, err := Wire(objs, source)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": Name, "b": "mine," + Name, "c": "mine," + Name, "operator": Name}
	copies := map[string]bool{}
	for _, obj := range got {
		switch obj.GetKind() {
		case "Deployment":
			if r := strings.Join(refs(t, obj), ","); r != want[obj.GetName()] {
				t.Errorf("Deployment %s imagePullSecrets %s, want %s", obj.GetName(), r, want[obj.GetName()])
			}
		case "Secret":
			copies[obj.GetNamespace()] = true
			if obj.GetLabels()[CopyLabel] != source.Namespace || obj.GetName() != Name {
				t.Errorf("copy %s/%s labels %v", obj.GetNamespace(), obj.GetName(), obj.GetLabels())
			}
			if typ, _, _ := unstructured.NestedString(obj.Object, "type"); typ != string(corev1.SecretTypeDockerConfigJson) {
				t.Errorf("copy type %q", typ)
			}
		}
	}
	if len(copies) != 2 || !copies["hub"] || !copies["other"] {
		t.Errorf("copies in %v, want hub and other", copies)
	}
}

func TestAppend(t *testing.T) {
	creds := []byte(`{"auths":{"registry.example":{"auth":"dTpw"}}}`)
	tests := []struct {
		name  string
		data  []byte
		wantN int
	}{
		{name: "no credentials", data: nil, wantN: 1},
		{name: "credentials", data: creds, wantN: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := make([]*unstructured.Unstructured, 1, 4)
			objs[0] = deployment("open-cluster-management", "klusterlet")
			got, err := Append(objs, "open-cluster-management", tt.data)
			require.NoError(t, err)
			require.Len(t, got, tt.wantN)
			require.Same(t, objs[0], got[0])
			if tt.data == nil {
				return
			}
			s := got[1]
			assert.Equal(t, "Secret", s.GetKind())
			assert.Equal(t, "open-cluster-management", s.GetNamespace())
			assert.Equal(t, Name, s.GetName())
			typ, _, _ := unstructured.NestedString(s.Object, "type")
			assert.Equal(t, string(corev1.SecretTypeDockerConfigJson), typ)
			// The caller's spare capacity is left alone.
			assert.Nil(t, objs[:2][1])
		})
	}
}
