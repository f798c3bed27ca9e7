package apply

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// FuzzParseAndSortManifests decodes arbitrary manifests (the input split at
// NUL bytes) and sorts them into apply order. Decoding never panics, every
// manifest either decodes to a named object or carries an error, and sorting
// is a stable permutation by rank.
func FuzzParseAndSortManifests(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}` + "\x00" +
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"x.y"}}` + "\x00" + `{}` + "\x00" + `not json`))
	f.Add([]byte(`{"kind":"Deployment","metadata":{"name":7}}`))
	f.Add([]byte(`[1,2,3]` + "\x00\x00" + `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"!!"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec := &workv1.ManifestWorkSpec{}
		for _, chunk := range bytes.Split(data, []byte{0}) {
			spec.Workload.Manifests = append(spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: chunk}})
		}
		ms := ParseManifests(spec)
		if len(ms) != len(spec.Workload.Manifests) {
			t.Fatalf("%d manifests parsed from %d", len(ms), len(spec.Workload.Manifests))
		}
		for i, m := range ms {
			if m.Ordinal != int32(i) {
				t.Fatalf("manifest %d has ordinal %d", i, m.Ordinal)
			}
			if (m.Object == nil) == (m.Err == nil) {
				t.Fatalf("manifest %d: object %v and error %v", i, m.Object, m.Err)
			}
			if m.Object != nil && m.Object.GetName() == "" {
				t.Fatalf("manifest %d decoded without a name", i)
			}
		}
		sorted := SortManifests(ms)
		if len(sorted) != len(ms) {
			t.Fatalf("sorting changed the count: %d → %d", len(ms), len(sorted))
		}
		seen := map[int32]bool{}
		for i, m := range sorted {
			if seen[m.Ordinal] {
				t.Fatalf("manifest %d appears twice after sorting", m.Ordinal)
			}
			seen[m.Ordinal] = true
			if i > 0 {
				prev := sorted[i-1]
				if prev.Rank() > m.Rank() || (prev.Rank() == m.Rank() && prev.Ordinal > m.Ordinal) {
					t.Fatalf("manifests %d (rank %d) and %d (rank %d) out of order", prev.Ordinal, prev.Rank(), m.Ordinal, m.Rank())
				}
			}
		}
	})
}
