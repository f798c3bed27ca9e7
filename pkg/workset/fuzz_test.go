package workset

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// fuzzTemplate is the manifest the override fuzz target patches.
const fuzzTemplate = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`

// FuzzOverrideMergePatch checks arbitrary merge patches of a
// ManifestWorkReplicaSet override: NewOverrider never panics, and an
// override it accepts yields, for a chosen cluster, manifests that are
// valid JSON objects with the template's identity; an unchosen cluster gets
// the template unchanged.
func FuzzOverrideMergePatch(f *testing.F) {
	for _, p := range []string{
		`{"spec":{"replicas":3}}`, `{"metadata":{"labels":{"app":null,"tier":"gold"}}}`,
		`{"metadata":{"name":"other"}}`, `{"kind":"StatefulSet"}`, `[]`, `null`, `{`, `{"spec":null}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`,
	} {
		f.Add(p, "Deployment", "web")
	}
	f.Fuzz(func(t *testing.T, patch, kind, name string) {
		spec := &workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
				Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(fuzzTemplate)}}},
			}},
			Overrides: []workv1alpha1.ManifestWorkOverride{{
				ClusterNames: []string{"chosen"},
				Patches: []workv1alpha1.ManifestPatch{{
					ResourceIdentifier: workv1alpha1.ManifestResourceIdentifier{Group: "apps", Kind: kind, Name: name, Namespace: "default"},
					MergePatch:         runtime.RawExtension{Raw: []byte(patch)},
				}},
			}},
		}
		o, err := NewOverrider(spec)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		plain, _, err := o.SpecFor("other", nil)
		if err != nil || string(plain.Workload.Manifests[0].Raw) != fuzzTemplate {
			t.Fatalf("an unchosen cluster got %s (%v)", plain.Workload.Manifests[0].Raw, err)
		}
		got, hash, err := o.SpecFor("chosen", nil)
		if err != nil {
			t.Fatalf("accepted override fails for a chosen cluster: %v", err)
		}
		if hash == "" {
			t.Fatal("no spec hash")
		}
		raw := got.Workload.Manifests[0].Raw
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			t.Fatalf("patched manifest is not a JSON object: %s", raw)
		}
		before, _ := readManifestMeta([]byte(fuzzTemplate))
		if after, err := readManifestMeta(raw); err != nil || after != before {
			t.Fatalf("patched manifest changed identity: %+v → %+v (%v)", before, after, err)
		}
	})
}
