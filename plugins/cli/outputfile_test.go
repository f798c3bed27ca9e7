package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestWriteFileRefusesLinksAndLeavesNothingOpen writes a token as an
// attacker sharing the directory would hope it is written: through a
// symbolic link to a file of theirs, or into an existing file they may
// read. Neither gets the token.
func TestWriteFileRefusesLinksAndLeavesNothingOpen(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "join.sh")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	err := WriteFile("--output-join-command-file", link, []byte("token\n"), PrivateScriptMode)
	assert.ErrorContains(t, err, "is a symbolic link")
	if data, _ := os.ReadFile(theirs); string(data) != "theirs\n" {
		t.Errorf("the link's target was written: %q", data)
	}

	// An existing file readable by everyone is replaced by a new private
	// file: a reader who opened the old one never reads the token.
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := WriteFile("--output-file", path, []byte("token\n"), PrivateFileMode); err != nil {
		t.Fatal(err)
	}
	if data, _ := io.ReadAll(old); string(data) != "old\n" {
		t.Errorf("the old file's open reader reads %q, want the old content", data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != PrivateFileMode {
		t.Errorf("mode = %v (%v), want %v", fi.Mode().Perm(), err, PrivateFileMode)
	}
	if data, _ := os.ReadFile(path); string(data) != "token\n" {
		t.Errorf("file = %q", data)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want theirs, join.sh and token (no temporary file left)", len(entries))
	}
}
