package v1beta1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// seedsDir is the repository's seed examples (test/seeds), four levels
// above this package.
var seedsDir = filepath.Join("..", "..", "..", "..", "test", "seeds")

// TestSeedsRoundTrip converts every v1alpha1 add-on object of the seed
// examples 001-* and 003-* to v1beta1, through JSON as the API server
// stores it, and back, and requires the object unchanged.
func TestSeedsRoundTrip(t *testing.T) {
	var files []string
	for _, pattern := range []string{"001-*.yaml", "003-*.yaml"} {
		m, err := filepath.Glob(filepath.Join(seedsDir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	converted := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := config.DecodeDocuments(data)
		if err != nil {
			t.Fatalf("decode %s: %v", file, err)
		}
		for _, u := range objs {
			gvk := u.GroupVersionKind()
			if gvk.GroupVersion() != v1alpha1.GroupVersion {
				continue
			}
			t.Run(filepath.Base(file)+"/"+gvk.Kind+"/"+u.GetName(), func(t *testing.T) {
				alpha := newObject(t, gvk.Kind, v1alpha1.GroupVersion.Version).(conversion.Convertible)
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, alpha); err != nil {
					t.Fatalf("decode the seed object: %v", err)
				}
				alpha.GetObjectKind().SetGroupVersionKind(gvk)
				beta := newObject(t, gvk.Kind, v1beta1.GroupVersion.Version).(conversion.Hub)
				if err := alpha.ConvertTo(beta); err != nil {
					t.Fatalf("to v1beta1: %v", err)
				}
				stored := newObject(t, gvk.Kind, v1beta1.GroupVersion.Version).(conversion.Hub)
				raw, err := json.Marshal(beta)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, stored); err != nil {
					t.Fatalf("decode the v1beta1 JSON %s: %v", raw, err)
				}
				back := newObject(t, gvk.Kind, v1alpha1.GroupVersion.Version).(conversion.Convertible)
				if err := back.ConvertFrom(stored); err != nil {
					t.Fatalf("back to v1alpha1: %v", err)
				}
				back.GetObjectKind().SetGroupVersionKind(gvk)
				if !apiequality.Semantic.DeepEqual(back, alpha) {
					t.Errorf("v1alpha1 → v1beta1 → v1alpha1 changed the seed (-got +want):\n%s", diff.Diff(back, alpha))
				}
			})
			converted++
		}
	}
	if converted == 0 {
		t.Fatalf("no v1alpha1 add-on object among the seeds %v", files)
	}
}

// newObject returns an empty add-on object of kind at version from the project's scheme.
func newObject(t *testing.T, kind, version string) runtime.Object {
	t.Helper()
	obj, err := apis.Scheme.New(v1beta1.GroupVersion.WithKind(kind).GroupKind().WithVersion(version))
	if err != nil {
		t.Fatalf("new %s/%s: %v", version, kind, err)
	}
	return obj
}
