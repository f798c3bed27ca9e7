package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWriteManifestsFile(t *testing.T) {
	dir := t.TempDir()
	cm := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName(name)
		return u
	}
	path := filepath.Join(dir, "out.yaml")
	// An existing file readable by everyone is truncated and made private.
	if err := os.WriteFile(path, []byte(strings.Repeat("old\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestsFile("--output-file", path, []*unstructured.Unstructured{cm("a"), cm("b")}, PrivateFileMode); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\n"
	if string(data) != want {
		t.Errorf("file =\n%s\nwant\n%s", data, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != PrivateFileMode {
		t.Errorf("mode = %v (%v), want %v", fi.Mode().Perm(), err, PrivateFileMode)
	}
	err = WriteManifestsFile("--output-file", filepath.Join(dir, "missing", "out.yaml"), nil, PrivateFileMode)
	if err == nil || !strings.HasPrefix(err.Error(), "--output-file: ") {
		t.Errorf("write into a missing directory: err = %v, want one naming --output-file", err)
	}
}
