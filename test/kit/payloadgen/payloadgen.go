// Package payloadgen generates the large payloads that the tests and
// benchmarks of large ManifestWorks deliver: CustomResourceDefinitions and
// ConfigMaps of generated text, which compresses as real schemas and
// configuration do, not as one repeated string does. The same options give
// the same bytes, and a later generation keeps the bytes of every object it
// does not change, so that two generations share the chunks of what stayed.
package payloadgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// GenerationLabel is the label on every generated object that holds the
// generation whose content the object carries: a test tells, on a managed
// cluster, an object of one generation from the next by it.
const GenerationLabel = "payloadgen.kubectl-ocm.io/generation"

// Sizes of the generated objects.
const (
	// CRDSize is the approximate size of a CustomResourceDefinition.
	CRDSize = 256 << 10
	// ConfigMapSize is the size of a ConfigMap's data.
	ConfigMapSize = 128 << 10
)

// Options say what Generate generates.
type Options struct {
	// MiB is the payload's size in MiB, about: a tenth in
	// CustomResourceDefinitions of CRDSize, the rest in ConfigMaps of
	// ConfigMapSize.
	MiB int
	// Namespace is the namespace of the ConfigMaps.
	Namespace string
	// Generation is the payload's generation, 1 when 0. The ConfigMaps
	// that Changed selects hold content of their own to it, and carry it
	// in GenerationLabel; every other object holds the content of
	// generation 1, and carries 1.
	Generation int
	// Changed selects, by index, the ConfigMaps that Generation changed;
	// nil selects none.
	Changed func(i int) bool
	// Removed selects, by index, the ConfigMaps that Generation leaves
	// out; nil selects none.
	Removed func(i int) bool
}

// Object names one generated object.
type Object struct {
	// Kind is CustomResourceDefinition or ConfigMap.
	Kind string
	// Namespace is empty for a CustomResourceDefinition.
	Namespace, Name string
	// Generation is the value of the object's GenerationLabel.
	Generation int
}

// Key names the object as Kind/name, the key tests compare clusters by.
func (o Object) Key() string { return o.Kind + "/" + o.Name }

// Payload is a generated payload.
type Payload struct {
	// Manifests are the objects as JSON, the CustomResourceDefinitions
	// first, then the ConfigMaps by index.
	Manifests []workv1.Manifest
	// Objects names the object of each manifest, in the same order.
	Objects []Object
}

// Generations returns the generation of each object, keyed by Object.Key.
func (p Payload) Generations() map[string]int {
	out := make(map[string]int, len(p.Objects))
	for _, o := range p.Objects {
		out[o.Key()] = o.Generation
	}
	return out
}

// words make the generated text: compressible as real schemas and
// configuration are, not as one repeated string is.
var words = strings.Fields(`the of a to in is for on that by with as this are be or from at an it
not which can when each its field value name list type object string number set must
default schema resource status spec condition reason message container image port
namespace label selector annotation replica volume mount secret config template policy`)

// text returns n bytes of words drawn from r.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
		if r.IntN(12) == 0 {
			fmt.Fprintf(&b, "%d ", r.IntN(100000))
		}
	}
	return b.String()[:n]
}

// Generate returns about o.MiB MiB of manifests as o says.
func Generate(o Options) Payload {
	gen := max(o.Generation, 1)
	r := rand.New(rand.NewPCG(1, 2))
	var p Payload
	add := func(obj map[string]any, id Object) {
		raw, err := json.Marshal(obj)
		if err != nil {
			panic(fmt.Sprintf("encode %s: %v", id.Key(), err)) // maps of strings always encode
		}
		p.Manifests = append(p.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		p.Objects = append(p.Objects, id)
	}
	metadata := func(name, namespace string, generation int) map[string]any {
		m := map[string]any{"name": name, "labels": map[string]any{GenerationLabel: strconv.Itoa(generation)}}
		if namespace != "" {
			m["namespace"] = namespace
		}
		return m
	}
	crds := max(1, o.MiB*1024/10/(CRDSize>>10))
	for i := range crds {
		props := map[string]any{}
		for j := range 256 {
			props[fmt.Sprintf("field%03d", j)] = map[string]any{"type": "string", "description": text(r, CRDSize/256-24)}
		}
		plural := fmt.Sprintf("payloads%02d", i)
		name := plural + ".payloadgen.example.com"
		add(map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": metadata(name, "", 1),
			"spec": map[string]any{
				"group": "payloadgen.example.com", "scope": "Namespaced",
				"names": map[string]any{"plural": plural, "kind": fmt.Sprintf("Payload%02d", i)},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{
					"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": props}}}}}},
			},
		}, Object{Kind: "CustomResourceDefinition", Name: name, Generation: 1})
	}
	cms := max(1, (o.MiB*1024-crds*(CRDSize>>10))/(ConfigMapSize>>10))
	for i := range cms {
		// Every ConfigMap draws its seed, so that leaving one out or
		// changing it keeps the others' content.
		seed, generation := r.Uint64(), 1
		if o.Removed != nil && o.Removed(i) {
			continue
		}
		if o.Changed != nil && o.Changed(i) {
			seed, generation = seed+uint64(gen-1), gen
		}
		name := fmt.Sprintf("payload-%04d", i)
		add(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": metadata(name, o.Namespace, generation),
			"data":     map[string]any{"config": text(rand.New(rand.NewPCG(seed, uint64(i))), ConfigMapSize)},
		}, Object{Kind: "ConfigMap", Namespace: o.Namespace, Name: name, Generation: generation})
	}
	return p
}
