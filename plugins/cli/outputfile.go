package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Permissions of the files the verbs write with clusteradm's --output-file
// and --output-join-command-file.
const (
	// PrivateFileMode is for files that hold a token: only their owner
	// reads them.
	PrivateFileMode fs.FileMode = 0o600
	// PrivateScriptMode is for a script that holds a token: only its owner
	// reads and runs it.
	PrivateScriptMode fs.FileMode = 0o700
	// PublicFileMode is for files without secrets.
	PublicFileMode fs.FileMode = 0o644
)

// WriteFile writes data to the file at path, creating or replacing it, and
// leaves it with permission perm even when it existed with another. It
// writes a new file beside path, readable by its owner only until it has
// perm, and renames it over path, so that no other user ever reads a token
// through the old file's permissions and a reader never sees half a file.
// It refuses a path that is a symbolic link, which would make it write
// where the link points. flag names the flag that gave path, for the error.
func WriteFile(flag, path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %s is a symbolic link: name the file itself", flag, path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("%s: write %s: %w", flag, path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: write %s: %w", flag, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("%s: %w", flag, err)
	}
	done = true
	return nil
}

// WriteManifestsFile writes objs to the file at path as the YAML stream
// that --dry-run=client -o yaml prints (PrintManifests), with WriteFile.
func WriteManifestsFile(flag, path string, objs []*unstructured.Unstructured, perm fs.FileMode) error {
	var buf bytes.Buffer
	if err := PrintManifests(&buf, objs, "yaml"); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return WriteFile(flag, path, buf.Bytes(), perm)
}
