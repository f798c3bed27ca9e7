// Package seeds reads the seed examples: the OCM manifests of
// ../shared/examples/seeds (next to the repository root, or $OCM_SEEDS_DIR)
// that integration tests apply unchanged.
package seeds

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// DirEnv overrides where the seed examples are read from.
const DirEnv = "OCM_SEEDS_DIR"

// Dir returns the directory of the seed examples: $OCM_SEEDS_DIR, or
// ../shared/examples/seeds next to the repository root.
func Dir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatalf("find the repository root to locate the seed examples: %v (set %s)", err, DirEnv)
	}
	dir := filepath.Join(root, "..", "shared", "examples", "seeds")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("seed examples not found at %s (expected ../shared/examples/seeds next to the repository root %s); set %s", dir, root, DirEnv)
	}
	return dir
}

// Read returns the objects of the seed example file name (such as
// 001-clustermanagementaddon-basic.yaml), in file order.
func Read(t testing.TB, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatalf("read seed %s: %v", name, err)
	}
	objs, err := config.DecodeDocuments(data)
	if err != nil || len(objs) == 0 {
		t.Fatalf("decode seed %s: %d objects, %v", name, len(objs), err)
	}
	return objs
}
