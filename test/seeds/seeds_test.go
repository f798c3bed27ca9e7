package seeds

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// DocumentsDirEnv names the directory of the documents' own examples that
// TestSeedsAreTheDocumentsExamples compares the seeds with. Unset, it is
// ../shared/examples/seeds beside the repository, where the project keeps
// the reference documents; set, the directory must exist.
const DocumentsDirEnv = "OCM_DOCUMENT_SEEDS_DIR"

// TestSeedsAreTheDocumentsExamples decodes every seed and the documents'
// example of the same name and requires the same objects: the repository's
// copies may differ in layout or comments, never in what they ask of a hub.
// It also requires one copy of each example, no more, no fewer.
func TestSeedsAreTheDocumentsExamples(t *testing.T) {
	dir := os.Getenv(DocumentsDirEnv)
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(wd, "..", "..", "..", "shared", "examples", "seeds")
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			t.Skipf("the reference documents' examples are not beside this checkout (%s); set %s to compare the seeds with them", dir, DocumentsDirEnv)
		}
	}
	docs, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no examples (*.yaml) in %s: %v", dir, err)
	}
	ours := map[string]bool{}
	for _, name := range Names("*.yaml") {
		ours[name] = true
	}
	for _, doc := range docs {
		name := filepath.Base(doc)
		t.Run(name, func(t *testing.T) {
			if !ours[name] {
				t.Fatalf("the documents' example %s has no copy in test/seeds: copy it there as written", name)
			}
			delete(ours, name)
			data, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := config.DecodeDocuments(data)
			if err != nil {
				t.Fatalf("decode the documents' %s: %v", name, err)
			}
			got := Read(t, name)
			if len(got) != len(want) {
				t.Fatalf("test/seeds/%s holds %d objects, the documents' example %d", name, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i].Object, want[i].Object) {
					t.Errorf("test/seeds/%s object %d differs from the documents' example:\n ours: %v\n docs: %v", name, i, got[i].Object, want[i].Object)
				}
			}
		})
	}
	for name := range ours {
		t.Errorf("test/seeds/%s is no example of the documents (%s): remove it or name its document", name, dir)
	}
}

// TestSeedsDecode requires every seed to decode into objects with a kind,
// wherever the repository is checked out.
func TestSeedsDecode(t *testing.T) {
	names := Names("*.yaml")
	if len(names) < 10 {
		t.Fatalf("only %d seeds embedded: %v", len(names), names)
	}
	for _, name := range names {
		for _, u := range Read(t, name) {
			if u.GetName() == "" {
				t.Errorf("seed %s: a %s without a name", name, u.GetKind())
			}
		}
	}
}
