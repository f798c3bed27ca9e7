// Package seeds holds the seed examples: the example objects of the
// reference documents the product is specified from, copied into the
// repository as written (a placeholder namespace such as
// ${MANAGED_CLUSTER_NAME} filled with cluster1), which the tests apply
// unchanged. The number in each file name names the document it comes from.
//
// The files are embedded, so a test reads them wherever it runs.
// TestSeedsAreTheDocumentsExamples checks that they still say what the
// documents' examples say.
package seeds

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

//go:embed *.yaml
var files embed.FS

// Names returns the names of the seed files matching the path.Match pattern
// (such as "001-*.yaml"), sorted.
func Names(pattern string) []string {
	names, err := fs.Glob(files, pattern)
	if err != nil {
		panic("seeds: bad pattern " + pattern + ": " + err.Error())
	}
	slices.Sort(names)
	return names
}

// Data returns the bytes of the seed file name.
func Data(t testing.TB, name string) []byte {
	t.Helper()
	data, err := files.ReadFile(path.Base(name))
	if err != nil {
		t.Fatalf("read seed %s: %v (the seeds are %v)", name, err, Names("*.yaml"))
	}
	return data
}

// Read returns the objects of the seed file name (such as
// 001-clustermanagementaddon-basic.yaml), in file order.
func Read(t testing.TB, name string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := config.DecodeDocuments(Data(t, name))
	if err != nil || len(objs) == 0 {
		t.Fatalf("decode seed %s: %d objects, %v", name, len(objs), err)
	}
	return objs
}
