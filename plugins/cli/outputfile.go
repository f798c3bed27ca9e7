package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"

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

// WriteFile writes data to the file at path, creating or truncating it,
// and leaves it with permission perm even when it existed with another.
// flag names the flag that gave path, for the error.
func WriteFile(flag, path string, data []byte, perm fs.FileMode) error {
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
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
