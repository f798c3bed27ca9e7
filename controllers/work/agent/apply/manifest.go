package apply

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Manifest is one decoded manifest of a ManifestWork.
type Manifest struct {
	// Ordinal is the manifest's index in spec.workload.manifests.
	Ordinal int32
	// Object is the decoded manifest; nil when decoding failed.
	Object *unstructured.Unstructured
	// Err is why the manifest could not be decoded.
	Err error
}

// ParseManifests decodes the manifests of a ManifestWork spec. A manifest
// that cannot be decoded keeps its ordinal and carries the error, so that
// it is reported without stopping the others.
func ParseManifests(spec *workv1.ManifestWorkSpec) []*Manifest {
	out := make([]*Manifest, 0, len(spec.Workload.Manifests))
	for i, raw := range spec.Workload.Manifests {
		m := &Manifest{Ordinal: int32(i)}
		m.Object, m.Err = decode(raw)
		out = append(out, m)
	}
	return out
}

// ParseManifest decodes one manifest, given as JSON, of ordinal ordinal, as
// ParseManifests decodes each of a spec's: a large payload's manifests are
// decoded one at a time as they are read. It keeps no reference to raw.
func ParseManifest(ordinal int32, raw []byte) *Manifest {
	m := &Manifest{Ordinal: ordinal}
	m.Object, m.Err = decode(workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	return m
}

// decode decodes one manifest and checks that it names its object.
func decode(m workv1.Manifest) (*unstructured.Unstructured, error) {
	data := m.Raw
	if len(data) == 0 && m.Object != nil {
		var err error
		if data, err = json.Marshal(m.Object); err != nil {
			return nil, fmt.Errorf("encode manifest: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, errors.New("manifest is empty")
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if u.GetName() == "" {
		return nil, fmt.Errorf("manifest %s has no metadata.name", u.GroupVersionKind())
	}
	return u, nil
}

// ResourceMeta returns the status identity of a manifest. resource is the
// resource name when the kind could be mapped; namespace is the one the
// object lives in (empty for cluster-scoped kinds).
func (m *Manifest) ResourceMeta(gvr schema.GroupVersionResource, namespace string) workv1.ManifestResourceMeta {
	meta := workv1.ManifestResourceMeta{Ordinal: m.Ordinal}
	if m.Object == nil {
		return meta
	}
	gvk := m.Object.GroupVersionKind()
	meta.Group, meta.Version, meta.Kind = gvk.Group, gvk.Version, gvk.Kind
	meta.Resource, meta.Name, meta.Namespace = gvr.Resource, m.Object.GetName(), namespace
	return meta
}
